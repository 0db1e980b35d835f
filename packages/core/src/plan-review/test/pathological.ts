/**
 * Generated pathological plans for the parsers' linear-time checks (parse.hardening.test.ts and the
 * hostile drill, drills/hostile.ts): each case repeats a short unit `n` times inside the context
 * where one of the parser's matchers reads it (a header line, a resource body, a heredoc, a 0.11
 * attribute, a list's closing line, a JSON value…), so that a matcher that backtracks over the run
 * shows up as a time that grows faster than the input.
 */

const HEAD =
  'Terraform will perform the following actions:\n\n  # aws_s3_bucket.b will be created\n  + resource "aws_s3_bucket" "b" {\n';
const LEGACY = 'Terraform will perform the following actions:\n\n+ aws_s3_bucket.b\n';

export interface PathologicalCase {
  name: string;
  /** The input for a repetition count (the size grows linearly with it). */
  make(n: number): string;
}

const units = [
  ' ',
  '\x1b]',
  '\x1b[',
  '\x1b[1',
  '# ',
  ' a',
  '"',
  '\\',
  '->',
  ']->',
  ' -> ',
  ':',
  '(',
  '{',
  '[',
  'module.a.',
  '\u2028',
  '= ',
  '# forces replacement',
  ' (deposed object 1)',
  ' has moved to x',
  'EOT ',
  'Error: ',
];

/** Contexts: where a line of repeated units sits, `%` standing for the run. */
const contexts: Array<[string, (run: string) => string]> = [
  ['line', (r) => `${r}\n${HEAD}  }\n`],
  ['line-x', (r) => `${r}x\n${HEAD}  }\n`],
  ['header', (r) => `  # a${r} will be created\n  + resource "a" "b" {\n  }\n`],
  ['header-x', (r) => `  # a${r}x\n`],
  ['header-separator', (r) => `  # a${r}\u2028x will be created\n`],
  ['after-header', (r) => `  # a.b will be created\n${r}x\n`],
  ['body-key', (r) => `${HEAD}      + a${r}x = 1\n  }\n`],
  ['body-value', (r) => `${HEAD}      + a = ${r}x\n  }\n`],
  ['body-block', (r) => `${HEAD}      + a${r} {\n      }\n  }\n`],
  ['list-close', (r) => `${HEAD}      + a = [\n        ]${r}x\n  }\n`],
  ['heredoc', (r) => `${HEAD}      + a = <<EOT\n${r}x\nEOT\n  }\n`],
  ['heredoc-close', (r) => `${HEAD}      + a = <<EOT\n  x\nEOT -> a${r}x\n  }\n`],
  ['legacy-attr', (r) => `${LEGACY}      a: ${r}x\n`],
  ['legacy-forces', (r) => `${LEGACY}      a: "x"${r} (forces new resource)\n`],
  ['legacy-header', (r) => `Terraform will perform the following actions:\n\n+ ${r}x\n`],
  ['outputs', (r) => `Changes to Outputs:\n  + a${r}x\n`],
  ['diagnostic', (r) => `Error: ${r}x\n`],
  ['prefix', (r) => `[${r}x\n2024-05-01T12:00:00Z ${r}\nsection_start:1:${r}\n${HEAD}  }\n`],
];

export const TEXT_CASES: PathologicalCase[] = contexts.flatMap(([where, wrap]) =>
  units.map((u) => ({
    name: `text ${where} × ${JSON.stringify(u)}`,
    make: (n: number) => wrap(u.repeat(Math.max(1, Math.floor(n / u.length)))),
  })),
);

/** JSON plans: deep nesting under the marker trees and the values, and wide trees. */
export const JSON_CASES: PathologicalCase[] = [
  ...(['after_unknown', 'after_sensitive', 'before_sensitive', 'after'] as const).map((key) => ({
    name: `json ${key} nested`,
    make: (n: number) => {
      const depth = Math.max(1, Math.floor(n / 30));
      const leaf = key === 'after' ? '"x"' : 'true';
      const inner = `${'{"a":[true,true,true,'.repeat(depth)}${leaf}${']}'.repeat(depth)}`;
      return jsonPlan(key, inner);
    },
  })),
  ...(['after_unknown', 'after_sensitive'] as const).map((key) => ({
    name: `json ${key} wide`,
    make: (n: number) =>
      jsonPlan(
        key,
        `{"a":[${Array(Math.max(1, Math.floor(n / 5)))
          .fill('true')
          .join(',')}]}`,
      ),
  })),
  { name: 'json deep arrays', make: (n: number) => jsonPlan('after', `${'['.repeat(n)}${']'.repeat(n)}`) },
  { name: 'json long string', make: (n: number) => jsonPlan('after', `{"a":"${'\\"'.repeat(n / 2)}"}`) },
];

function jsonPlan(key: string, tree: string): string {
  const after = key === 'after' ? tree : '{"a":1}';
  const marker = key === 'after' ? '' : `,"${key}":${tree}`;
  return `{"format_version":"1.2","resource_changes":[{"address":"aws_s3_bucket.b","mode":"managed","type":"aws_s3_bucket","name":"b","change":{"actions":["update"],"before":{"a":0},"after":${after}${marker}}}]}`;
}

export const ALL_CASES = [...TEXT_CASES, ...JSON_CASES];
