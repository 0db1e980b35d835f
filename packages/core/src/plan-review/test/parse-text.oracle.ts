/*
 * ORACLE ONLY: a frozen copy of the regex-per-line text parser that parse-text.ts replaced (commit
 * 551b982), kept for parse-text.differential.test.ts, which checks that the new parser gives the
 * same parse. Not imported by anything else; do not fix bugs here (fix them in parse-text.ts and
 * update the test's expectations instead).
 */
import {
  addressParts,
  type ParsedPlan,
  type Path,
  type PlanAction,
  type PlanDrift,
  type PlanResourceChange,
  type PlanSummaryLine,
} from '../plan';

/*
 * The `terraform plan` text parser, written here by hand. We looked for a maintained library on npm:
 * the only parser of plan text there, `terraform-plan-parser` (lifeomic), reads the Terraform 0.11
 * format only and has not followed Terraform since; the other plan packages render diffs, they do not
 * parse them. Terraform itself offers no parser of its human-readable output (the machine form is
 * `terraform show -json`, read in parse-json.ts). So this module reads the rendering of Terraform
 * 0.12 to 1.x (the same grammar throughout), tolerates the 0.11 format, and keeps line numbers so
 * that every annotation can cite the lines it rests on.
 *
 * The rendering: a header comment per resource instance (`# aws_x.y will be created`), optional
 * comment notes (`# (moved from …)`, `# (because …)`), then a block whose lines carry an action
 * symbol (`+`, `-`, `~`, `-/+`, `+/-`, `<=`) and `key = value`, nested blocks, lists, maps, heredocs
 * and `jsonencode(…)`, `old -> new`, `(known after apply)`, `(sensitive value)` and
 * `# forces replacement`. CI logs wrap it in noise: ANSI colours, timestamps, Terragrunt prefixes.
 */

const UNKNOWN = Symbol('known after apply');
const SENSITIVE = Symbol('sensitive');
const ABSENT = undefined;

// eslint-disable-next-line no-control-regex -- ANSI escapes are control characters by definition
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;
/** GitHub Actions raw logs, `2024-05-01T12:00:00.1234567Z `; GitLab's section markers. */
const CI_PREFIXES = [
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?/,
  // eslint-disable-next-line no-control-regex -- GitLab's markers end in an ANSI erase-line
  /^section_(?:start|end):\d+:[^\r]*?\r?(?:\x1b\[0K)?/,
  // Terragrunt: `[module/path] terraform: …`, and newer `12:00:00.000 STDOUT [path] terraform: …`.
  /^(?:\d\d:\d\d:\d\d\.\d{3} )?(?:STDOUT |STDERR )?\[[^\]\n]*\] (?:terraform|tofu): ?/,
  // Box-drawing gutters of diagnostics.
];

/** The posted text, line by line, without colours or CI prefixes; numbering stays that of the input. */
export function cleanLines(text: string): string[] {
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    let line = lines[k]!;
    if (line.includes('\x1b')) line = line.replace(ANSI, '');
    const cr = line.lastIndexOf('\r', line.length - 2);
    if (cr >= 0) line = line.slice(cr + 1);
    // Only lines that start like a prefix are tried against the prefixes (most lines do not).
    const c = line.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 115 /* s */ || c === 91 /* [ */)
      for (const p of CI_PREFIXES) line = line.replace(p, '');
    lines[k] = line.trimEnd();
  }
  return lines;
}

const HEADER =
  /^\s*# (.+?) (will be created|will be destroyed|will be updated in-place|must be replaced|is tainted, so must be replaced|will be replaced, as requested|will be replaced due to changes in replace_triggered_by|will be read during apply|will be imported|will no longer be managed by Terraform(?:, but will not be destroyed)?|has moved to (.+)|has changed|has been changed|has been deleted)$/;
const BLOCK_OPEN = /^\s*(-\/\+|\+\/-|<=|[+~.-])?\s*(resource|data) "([^"]+)" "([^"]+)" \{(.*)$/;
const NOTE = /^\s*# \((.*)\)$/;
const SUMMARY =
  /^\s*Plan: (?:(\d+) to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy(?:, (\d+) to forget)?\.?/;
const DEPOSED = /^(.*) \(deposed object ([0-9a-f]+)\)$/;

interface Header {
  address: string;
  phrase: string;
  movedTo: string | null;
  deposed: string | null;
  line: number;
}

function readHeader(line: string, index: number): Header | null {
  const m = HEADER.exec(line);
  if (!m) return null;
  let address = m[1]!;
  let deposed: string | null = null;
  const d = DEPOSED.exec(address);
  if (d) {
    address = d[1]!;
    deposed = d[2]!;
  }
  return { address, phrase: m[2]!, movedTo: m[3] ?? null, deposed, line: index };
}

const PHRASE_ACTION: Record<string, { action: PlanAction; reason: string | null }> = {
  'will be created': { action: 'create', reason: null },
  'will be destroyed': { action: 'delete', reason: null },
  'will be updated in-place': { action: 'update', reason: null },
  'must be replaced': { action: 'replace', reason: 'replace_because_cannot_update' },
  'is tainted, so must be replaced': { action: 'replace', reason: 'replace_because_tainted' },
  'will be replaced, as requested': { action: 'replace', reason: 'replace_by_request' },
  'will be replaced due to changes in replace_triggered_by': {
    action: 'replace',
    reason: 'replace_by_triggers',
  },
  'will be read during apply': { action: 'read', reason: null },
  'will be imported': { action: 'no-op', reason: null },
  'will no longer be managed by Terraform': { action: 'forget', reason: null },
  'will no longer be managed by Terraform, but will not be destroyed': { action: 'forget', reason: null },
};

const DELETE_REASONS: Array<[RegExp, string]> = [
  [/is not in configuration/, 'delete_because_no_resource_config'],
  [/does not use count/, 'delete_because_no_resource_config'],
  [/index \[\d+\] is out of range for count/, 'delete_because_count_index'],
  [/key \[.*\] is not in for_each map/, 'delete_because_each_key'],
  [/no module instance/, 'delete_because_no_module'],
  [
    /its containing module is not in configuration|module .* is not in configuration/,
    'delete_because_no_module',
  ],
  [/left over from a partially-failed replacement/, 'deposed'],
];
const READ_REASONS: Array<[RegExp, string]> = [
  [/config refers to values not yet known/, 'read_because_config_unknown'],
  [/depends on a resource or a module with changes pending/, 'read_because_dependency_pending'],
];

// ---------------------------------------------------------------- values

interface Diff {
  before: unknown;
  after: unknown;
}

interface Scalar {
  value: unknown;
  end: number;
}

/** One scalar token at `pos`: a string, number, bool, null or a Terraform placeholder. */
function readScalar(s: string, pos: number): Scalar | null {
  while (s[pos] === ' ') pos++;
  const rest = s.slice(pos);
  if (rest.startsWith('"')) {
    let i = pos + 1;
    while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
    const raw = s.slice(pos, i + 1);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw.slice(1, -1);
    }
    return { value, end: i + 1 };
  }
  for (const [token, value] of [
    ['(known after apply)', UNKNOWN],
    ['(sensitive value)', SENSITIVE],
    ['(sensitive)', SENSITIVE],
  ] as const) {
    if (rest.startsWith(token)) return { value, end: pos + token.length };
  }
  const m = /^[^\s,]+/.exec(rest);
  if (!m) return null;
  const word = m[0];
  let value: unknown = word;
  if (word === 'null') value = null;
  else if (word === 'true') value = true;
  else if (word === 'false') value = false;
  else if (/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(word)) value = Number(word);
  return { value, end: pos + word.length };
}

const FORCES_MARK = ' # forces replacement';
const FORCES = { test: (t: string) => t.endsWith(FORCES_MARK) };
const withoutForces = (t: string) => t.slice(0, t.length - FORCES_MARK.length).trimEnd();
const ARROW = /^\s*->\s*/;

class BodyParser {
  replacePaths: Path[] = [];

  constructor(private readonly lines: string[]) {}

  /** Symbol at the start of a (trimmed) line: '+', '-', '~', '-/+', '+/-', '<=' or ''. */
  private symbolOf(text: string): { sym: string; rest: string } {
    const c = text.charCodeAt(0);
    // '+', '-', '~', '<', '.'
    if (c !== 43 && c !== 45 && c !== 126 && c !== 60 && c !== 46) return { sym: '', rest: text };
    const m = /^(-\/\+|\+\/-|<=|[+~-])\s+(.*)$/.exec(text);
    if (m) return { sym: m[1]!, rest: m[2]! };
    return { sym: '', rest: text };
  }

  /**
   * The attributes and blocks of a block body from line `i` to its closing `}`; answers the index of
   * that closing line.
   */
  parseBody(
    i: number,
    path: Path,
  ): { before: Record<string, unknown>; after: Record<string, unknown>; end: number } {
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    const pushBlock = (target: Record<string, unknown>, key: string, value: unknown) => {
      if (value === ABSENT) return;
      const list = (target[key] as unknown[] | undefined) ?? [];
      list.push(value);
      target[key] = list;
    };
    for (; i < this.lines.length; i++) {
      const text = this.lines[i]!.trim();
      if (text === '') continue;
      if (/^}\s*(#.*)?$/.test(text)) return { before, after, end: i };
      if (text.startsWith('#')) continue; // (N unchanged … hidden)
      const { sym, rest } = this.symbolOf(text);
      // A nested block: `ingress {`, `rule "name" {`, `timeouts {}`.
      const block =
        rest.endsWith('{') || rest.endsWith('}') || rest.endsWith(FORCES_MARK)
          ? /^([A-Za-z_][\w-]*)((?: "[^"]*")*) \{(\})?(\s+# forces replacement)?$/.exec(rest)
          : null;
      if (block) {
        const key = block[1]!;
        const index = ((sym === '+' ? after : before)[key] as unknown[] | undefined)?.length ?? 0;
        if (block[4]) this.replacePaths.push([...path, key, index]);
        let inner: Diff;
        if (block[3]) {
          inner = { before: {}, after: {} };
        } else {
          const body = this.parseBody(i + 1, [...path, key, index]);
          i = body.end;
          if (FORCES.test(this.lines[i]!)) this.replacePaths.push([...path, key, index]);
          inner = { before: body.before, after: body.after };
        }
        const d = applySymbol(sym, inner);
        pushBlock(before, key, d.before);
        pushBlock(after, key, d.after);
        continue;
      }
      const attr = /^("(?:[^"\\]|\\.)*"|[^\s=]+)\s+=\s?(.*)$/.exec(rest);
      if (!attr) continue; // a line we do not understand is skipped, never fatal
      const key = attr[1]!.startsWith('"') ? String(JSON.parse(attr[1]!)) : attr[1]!;
      const parsed = this.parseValue(attr[2]!, i, [...path, key]);
      i = parsed.end;
      const d = applySymbol(sym, parsed);
      if (d.before !== ABSENT) before[key] = d.before;
      if (d.after !== ABSENT) after[key] = d.after;
    }
    return { before, after, end: this.lines.length - 1 };
  }

  /** A value starting in `text` (the rest of line `i`); answers it and the last line it used. */
  parseValue(text: string, i: number, path: Path): Diff & { end: number } {
    let t = text;
    let forces = false;
    if (FORCES.test(t)) {
      forces = true;
      t = withoutForces(t);
    }
    let result: Diff & { end: number };
    const tt = t.trim();
    const c0 = tt.charCodeAt(0);
    const last = tt.charCodeAt(tt.length - 1);
    const heredoc = c0 === 60 /* < */ ? /^<<(-?)([A-Za-z_]\w*)$/.exec(tt) : null;
    const wrapper =
      last === 40 /* ( */
        ? /^(jsonencode|yamlencode|toset|tolist|tomap|sensitive|base64encode)\($/.exec(tt)
        : null;
    const wrapperOneLine = last === 41 /* ) */ ? /^(jsonencode|toset|tolist|tomap)\((.*)\)$/.exec(tt) : null;
    if (heredoc) {
      result = this.parseHeredoc(i, heredoc[2]!);
    } else if (tt === '[' || tt === '{') {
      result = tt === '[' ? this.parseList(i + 1, path) : this.parseMap(i + 1, path);
    } else if (wrapper) {
      result = this.parseWrapped(i, wrapper[1]!, path);
    } else if ((c0 === 91 || c0 === 123) && (tt.startsWith('[]') || tt.startsWith('{}'))) {
      const v = tt.startsWith('[]') ? [] : {};
      result = { before: v, after: v, end: i };
      const arrow = /^(\[\]|\{\})\s*->\s*(.*)$/.exec(tt);
      if (arrow) result = { before: v, after: readScalar(arrow[2]!, 0)?.value, end: i };
    } else if (wrapperOneLine && !t.includes(' -> ')) {
      const v = looseJson(wrapperOneLine[2]!);
      result = { before: v, after: v, end: i };
    } else {
      const first = readScalar(t, 0);
      if (!first) return { before: ABSENT, after: ABSENT, end: i };
      const tail = t.slice(first.end);
      const arrow = ARROW.exec(tail);
      if (arrow) {
        const afterText = tail.slice(arrow[0].length);
        if (/^(\[|\{|<<|jsonencode\()/.test(afterText.trim())) {
          const second = this.parseValue(afterText, i, path);
          result = { before: first.value, after: second.after, end: second.end };
        } else {
          result = { before: first.value, after: readScalar(afterText, 0)?.value, end: i };
        }
      } else {
        result = { before: first.value, after: first.value, end: i };
      }
    }
    // A container's closing line may carry `-> (known after apply)` or the replacement mark.
    const closing = this.lines[result.end] ?? '';
    if (result.end !== i) {
      if (FORCES.test(closing)) forces = true;
      const arrow = /[\]})]\s*->\s*(.+?)(\s+# forces replacement)?$/.exec(closing);
      if (arrow) result = { ...result, after: readScalar(arrow[1]!, 0)?.value };
    }
    if (forces) this.replacePaths.push(path);
    return result;
  }

  private parseList(i: number, path: Path): Diff & { end: number } {
    const before: unknown[] = [];
    const after: unknown[] = [];
    for (; i < this.lines.length; i++) {
      const text = this.lines[i]!.trim();
      if (text === '') continue;
      if (/^[\]})]/.test(text)) return { before, after, end: i };
      if (text.startsWith('#')) continue;
      const { sym, rest } = this.symbolOf(text);
      const v = this.parseValue(rest.replace(/,$/, ''), i, [...path, after.length]);
      i = v.end;
      const d = applySymbol(sym, v);
      if (d.before !== ABSENT) before.push(d.before);
      if (d.after !== ABSENT) after.push(d.after);
    }
    return { before, after, end: this.lines.length - 1 };
  }

  private parseMap(i: number, path: Path): Diff & { end: number } {
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    for (; i < this.lines.length; i++) {
      const text = this.lines[i]!.trim();
      if (text === '') continue;
      if (/^[\]})]/.test(text)) return { before, after, end: i };
      if (text.startsWith('#')) continue;
      const { sym, rest } = this.symbolOf(text);
      // An object inside a list or jsonencode without a key: `{` … `}`.
      const entry = /^("(?:[^"\\]|\\.)*"|[^\s=]+)\s+=\s?(.*)$/.exec(rest);
      if (!entry) continue;
      const key = entry[1]!.startsWith('"') ? String(JSON.parse(entry[1]!)) : entry[1]!;
      const v = this.parseValue(entry[2]!.replace(/,$/, ''), i, [...path, key]);
      i = v.end;
      const d = applySymbol(sym, v);
      if (d.before !== ABSENT) before[key] = d.before;
      if (d.after !== ABSENT) after[key] = d.after;
    }
    return { before, after, end: this.lines.length - 1 };
  }

  /** `jsonencode(` … `)`: one value inside, itself rendered as a diff. */
  private parseWrapped(i: number, fn: string, path: Path): Diff & { end: number } {
    let j = i + 1;
    while (j < this.lines.length && this.lines[j]!.trim() === '') j++;
    const text = this.lines[j]?.trim() ?? '';
    const { sym, rest } = this.symbolOf(text);
    const inner = this.parseValue(rest, j, path);
    let end = inner.end + 1;
    while (end < this.lines.length && !/^\)/.test(this.lines[end]!.trim())) end++;
    const d = applySymbol(sym, inner);
    void fn;
    return { before: d.before, after: d.after, end: Math.min(end, this.lines.length - 1) };
  }

  /** A heredoc; in an update its lines carry `+`/`-` in a column of their own. */
  private parseHeredoc(i: number, marker: string): Diff & { end: number } {
    const before: string[] = [];
    const after: string[] = [];
    let j = i + 1;
    let closedAfter: unknown = ABSENT;
    let closedWithArrow = false;
    for (; j < this.lines.length; j++) {
      const line = this.lines[j]!;
      const close = new RegExp(`^${marker}(?:\\s*->\\s*(.*?))?(?:\\s+# forces replacement)?$`).exec(
        line.trim(),
      );
      if (close) {
        if (close[1] !== undefined) {
          closedWithArrow = true;
          closedAfter = readScalar(close[1], 0)?.value;
        }
        break;
      }
      const m = /^(\s*)([+-]) {1,3}(.*)$/.exec(line);
      if (m && line.trim().length > 1) {
        if (m[2] === '+') after.push(m[3]!);
        else before.push(m[3]!);
      } else {
        before.push(line.trim());
        after.push(line.trim());
      }
    }
    return {
      before: before.join('\n'),
      after: closedWithArrow ? closedAfter : after.join('\n'),
      end: Math.min(j, this.lines.length - 1),
    };
  }
}

function looseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function applySymbol(sym: string, v: Diff): Diff {
  switch (sym) {
    case '+':
      return { before: ABSENT, after: v.after };
    case '-':
      return { before: v.before, after: ABSENT };
    default:
      return v;
  }
}

/** Removes placeholders in place (the values are the parser's own), listing where they were. */
function extract(value: unknown, marker: symbol, path: Path, out: Path[]): unknown {
  if (value === marker) {
    out.push([...path]);
    return ABSENT;
  }
  if (Array.isArray(value)) {
    for (let k = 0; k < value.length; k++) {
      const v: unknown = value[k];
      if (v === null || (typeof v !== 'object' && typeof v !== 'symbol')) continue;
      path.push(k);
      value[k] = extract(v, marker, path, out) ?? null;
      path.pop();
    }
    return value;
  }
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k in o) {
      const v = o[k];
      if (v === null || (typeof v !== 'object' && typeof v !== 'symbol')) continue;
      path.push(k);
      const x = extract(v, marker, path, out);
      path.pop();
      if (x === ABSENT) delete o[k];
    }
    return o;
  }
  return value;
}

function finish(
  raw: Record<string, unknown> | null,
  unknown: Path[],
  sensitive: Path[],
): Record<string, unknown> | null {
  if (!raw) return null;
  const noUnknown = extract(raw, UNKNOWN, [], unknown) as Record<string, unknown>;
  return extract(noUnknown, SENSITIVE, [], sensitive) as Record<string, unknown>;
}

const pathKey = (p: Path) => JSON.stringify(p);
const uniquePaths = (paths: Path[]) => {
  const seen = new Set<string>();
  return paths.filter((p) => !seen.has(pathKey(p)) && seen.add(pathKey(p)));
};

// ---------------------------------------------------------------- document

function diagnostics(lines: string[]): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^[│╷\s]*(Error|Warning): (.+)$/.exec(lines[i]!);
    if (!m) continue;
    (m[1] === 'Error' ? errors : warnings).push(m[2]!.trim());
  }
  return { errors, warnings };
}

/** Parses `terraform plan` text (0.12 to 1.x; 0.11 tolerated); null when the text is not a plan. */
export function parsePlanText(text: string): ParsedPlan | null {
  const lines = cleanLines(text);
  const modern = parseModern(lines);
  if (modern && (modern.changes.length || modern.drift.length || modern.noChanges)) return modern;
  return parseLegacy(lines) ?? modern;
}

function parseModern(lines: string[]): ParsedPlan | null {
  const changes: PlanResourceChange[] = [];
  const drift: PlanDrift[] = [];
  const outputs: ParsedPlan['outputs'] = [];
  let summaryLine: PlanSummaryLine | null = null;
  let noChanges = false;
  let terraformVersion: string | null = null;
  let section: 'none' | 'drift' | 'actions' | 'outputs' = 'none';
  let sawMarker = false;

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    const version = /^Terraform v(\d+\.\d+\.\d+\S*)/.exec(trimmed);
    if (version) terraformVersion = version[1]!;
    if (/^Note: Objects have changed outside of Terraform/.test(trimmed)) {
      section = 'drift';
      sawMarker = true;
      continue;
    }
    if (
      /^Unless you have made equivalent changes to your configuration|^This is a refresh-only plan/.test(
        trimmed,
      )
    ) {
      section = 'none';
      continue;
    }
    if (/^Terraform (will perform|planned) the following actions/.test(trimmed)) {
      section = 'actions';
      sawMarker = true;
      continue;
    }
    if (/^Changes to Outputs:/.test(trimmed)) {
      section = 'outputs';
      sawMarker = true;
      continue;
    }
    const summary = SUMMARY.exec(line);
    if (summary) {
      summaryLine = {
        import: Number(summary[1] ?? 0),
        add: Number(summary[2]),
        change: Number(summary[3]),
        destroy: Number(summary[4]),
      };
      sawMarker = true;
      continue;
    }
    if (
      /^No changes\. (Your infrastructure matches the configuration|Infrastructure is up-to-date)/.test(
        trimmed,
      )
    ) {
      noChanges = true;
      sawMarker = true;
      continue;
    }
    if (section === 'outputs') {
      const out = /^\s*([+~-])\s+([A-Za-z_][\w-]*)\s+=/.exec(line);
      if (out)
        outputs.push({
          name: out[2]!,
          action: out[1] === '+' ? 'create' : out[1] === '-' ? 'delete' : 'update',
        });
      continue;
    }
    const header = readHeader(line, i);
    if (!header) continue;
    sawMarker = true;
    const notes: string[] = [];
    let j = i + 1;
    let movedFrom: string | null = header.movedTo ? header.address : null;
    let importing: string | null = header.phrase === 'will be imported' ? '' : null;
    for (; j < lines.length; j++) {
      const note = NOTE.exec(lines[j]!);
      if (!note) break;
      const moved = /^moved from (.+)$/.exec(note[1]!);
      const imported = /^imported from "(.*)"$/.exec(note[1]!);
      if (moved) movedFrom = moved[1]!;
      else if (imported) importing = imported[1]!;
      else notes.push(note[1]!);
    }
    while (j < lines.length && lines[j]!.trim() === '') j++;
    const open = BLOCK_OPEN.exec(lines[j] ?? '');
    const parser = new BodyParser(lines);
    let end = j - 1;
    let before: Record<string, unknown> | null = null;
    let after: Record<string, unknown> | null = null;
    let sym = '';
    if (open) {
      sym = open[1] ?? '';
      const inline = open[5]!.trim();
      if (inline === '}') {
        before = {};
        after = {};
        end = j;
      } else {
        const body = parser.parseBody(j + 1, []);
        before = body.before;
        after = body.after;
        end = body.end;
      }
    }
    i = Math.max(i, end);
    const address = header.movedTo ?? header.address;
    const parts = addressParts(address);
    const lineRange = { start: header.line + 1, end: end + 1 };
    if (section === 'drift' || /^(has changed|has been changed|has been deleted)$/.test(header.phrase)) {
      const deleted = header.phrase === 'has been deleted';
      const u: Path[] = [];
      const s: Path[] = [];
      drift.push({
        address,
        type: parts.type,
        name: parts.name,
        change: deleted ? 'delete' : 'update',
        before: finish(before, u, s),
        after: deleted ? null : finish(after, u, s),
        source: { kind: 'text', lines: lineRange },
      });
      continue;
    }
    const known = header.movedTo
      ? { action: 'no-op' as PlanAction, reason: null }
      : (PHRASE_ACTION[header.phrase] ?? { action: 'no-op' as PlanAction, reason: null });
    let reason = known.reason;
    for (const note of notes) {
      for (const [re, r] of [...DELETE_REASONS, ...READ_REASONS]) if (re.test(note)) reason = r;
    }
    if (header.deposed) reason = 'deposed';
    const unknown: Path[] = [];
    const sensitive: Path[] = [];
    const action = known.action;
    const b = finish(action === 'create' || action === 'read' ? null : before, [], sensitive);
    const a = finish(action === 'delete' || action === 'forget' ? null : after, unknown, sensitive);
    changes.push({
      address,
      mode: parts.mode,
      type: parts.type,
      name: parts.name,
      action,
      replaceOrder: action === 'replace' ? (sym === '+/-' ? 'create_first' : 'delete_first') : null,
      reason,
      replacePaths: uniquePaths(parser.replacePaths),
      movedFrom,
      importing,
      deposed: header.deposed,
      before: b,
      after: a,
      afterUnknown: uniquePaths(unknown),
      sensitive: uniquePaths(sensitive),
      source: { kind: 'text', lines: lineRange },
    });
  }
  if (!sawMarker) return null;
  const { errors, warnings } = diagnostics(lines);
  return {
    format: 'text',
    terraformVersion,
    changes,
    drift,
    summaryLine,
    noChanges,
    outputs,
    errors,
    warnings,
  };
}

// ---------------------------------------------------------------- Terraform 0.11

const LEGACY_HEADER =
  /^\s*(-\/\+|[+~-]|<=)\s+((?:module\.[\w-]+\.)*(?:data\.)?[A-Za-z][\w-]*\.[\w-]+(?:\[\d+\]|\.\d+)?)(?:\s+\((new resource required|tainted|deposed)\))?\s*$/;
const LEGACY_ATTR = /^\s{4,}(\S+):\s+(.*?)\s*$/;

function legacyValue(text: string): unknown {
  const t = text.trim();
  if (t === '<computed>') return UNKNOWN;
  if (t === '<sensitive>') return SENSITIVE;
  return readScalar(t, 0)?.value ?? t;
}

/**
 * A 0.11 attribute key as a path: `cidr_blocks.0` is `['cidr_blocks', 0]`; the count markers
 * (`cidr_blocks.#`, `tags.%`) stand for their collection.
 */
function legacyPath(key: string): Path {
  const parts: Path = key.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  if (parts.length > 1 && (parts.at(-1) === '#' || parts.at(-1) === '%')) parts.pop();
  return parts;
}

/**
 * Terraform 0.11 prints attributes flattened as its state stored them: `cidr_blocks.# = 1`,
 * `cidr_blocks.0 = "0.0.0.0/0"`, `tags.% = 1`, `tags.Name = "web"`, `ingress.2541437006.from_port`
 * (a set element under its hash). This rebuilds the structured values the 1.x parser gives: lists
 * (indices in order; a set's elements, under their hashes, in hash order), maps (whose keys may hold dots:
 * `tags.kubernetes.io/role`) and nested blocks. A collection whose count is printed but none of its
 * elements is left out: the plan does not say what it holds.
 */
function unflattenLegacy(flat: Map<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const groups = new Map<string, Map<string, unknown>>();
  for (const [key, value] of flat) {
    const dot = key.indexOf('.');
    if (dot <= 0) {
      out[key] = value;
      continue;
    }
    const head = key.slice(0, dot);
    if (!groups.has(head)) groups.set(head, new Map());
    groups.get(head)!.set(key.slice(dot + 1), value);
  }
  for (const [head, rest] of groups) {
    const value = legacyCollection(rest);
    if (value === undefined) continue;
    out[head] = value;
  }
  return out;
}

function legacyCollection(rest: Map<string, unknown>): unknown {
  const isMap = rest.has('%');
  const isList = rest.has('#');
  const count = Number(rest.get('#') ?? rest.get('%'));
  rest.delete('%');
  rest.delete('#');
  if (!rest.size) return (isMap || isList) && count === 0 ? (isMap ? {} : []) : undefined;
  // A map of scalars: the rest of the key is the map key, dots and all.
  if (isMap) return Object.fromEntries(rest);
  const inner = unflattenLegacy(rest);
  const keys = Object.keys(inner);
  if (isList || keys.every((k) => /^\d+$/.test(k))) {
    // List indices count from 0; a set's elements sit under hashes, whose order means nothing.
    return [...keys].sort((x, y) => Number(x) - Number(y)).map((k) => inner[k]);
  }
  return inner;
}

/** Terraform 0.11's format: `+ aws_x.y`, then `attr: "old" => "new" (forces new resource)`. */
function parseLegacy(lines: string[]): ParsedPlan | null {
  const start = lines.findIndex((l) => /^Terraform will perform the following actions/.test(l.trim()));
  if (start < 0) return null;
  const changes: PlanResourceChange[] = [];
  let summaryLine: PlanSummaryLine | null = null;
  let current: PlanResourceChange | null = null;
  // The flattened attributes of `current`, before and after, rebuilt when its block ends.
  let flatBefore = new Map<string, unknown>();
  let flatAfter = new Map<string, unknown>();
  const finish = () => {
    if (!current) return;
    if (current.before) current.before = unflattenLegacy(flatBefore);
    if (current.after) current.after = unflattenLegacy(flatAfter);
    flatBefore = new Map();
    flatAfter = new Map();
  };
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    const summary = SUMMARY.exec(line);
    if (summary) {
      summaryLine = {
        import: 0,
        add: Number(summary[2]),
        change: Number(summary[3]),
        destroy: Number(summary[4]),
      };
      break;
    }
    const h = LEGACY_HEADER.exec(line);
    if (h) {
      finish();
      const sym = h[1]!;
      const address = h[2]!.replace(/\.(\d+)$/, '[$1]');
      const parts = addressParts(address);
      const action: PlanAction =
        sym === '+'
          ? 'create'
          : sym === '-'
            ? 'delete'
            : sym === '~'
              ? 'update'
              : sym === '<='
                ? 'read'
                : 'replace';
      current = {
        address,
        mode: parts.mode,
        type: parts.type,
        name: parts.name,
        action,
        replaceOrder: action === 'replace' ? 'delete_first' : null,
        reason:
          h[3] === 'tainted'
            ? 'replace_because_tainted'
            : h[3] === 'deposed'
              ? 'deposed'
              : action === 'replace'
                ? 'replace_because_cannot_update'
                : null,
        replacePaths: [],
        movedFrom: null,
        importing: null,
        deposed: h[3] === 'deposed' ? '' : null,
        before: action === 'create' || action === 'read' ? null : {},
        after: action === 'delete' ? null : {},
        afterUnknown: [],
        sensitive: [],
        source: { kind: 'text', lines: { start: i + 1, end: i + 1 } },
      };
      changes.push(current);
      continue;
    }
    const attr = LEGACY_ATTR.exec(line);
    if (attr && current) {
      const key = attr[1]!;
      let value = attr[2]!;
      if (/\(forces new resource\)$/.test(value)) {
        current.replacePaths.push(legacyPath(key));
        value = value.replace(/\s*\(forces new resource\)$/, '');
      }
      const [b, a] = value.includes(' => ') ? value.split(' => ') : [value, value];
      const bv = legacyValue(b!);
      const av = legacyValue(a!);
      // 0.11 writes an attribute that appears as `"" => "x"` and one that goes as `"x" => ""`.
      const appears = b!.trim() === '""' && a!.trim() !== '""';
      const goes = a!.trim() === '""' && b!.trim() !== '""';
      if (current.before && current.action !== 'create' && !appears) {
        if (bv !== UNKNOWN && bv !== SENSITIVE) flatBefore.set(key, bv);
      }
      if (current.after && !goes) {
        if (av === UNKNOWN) current.afterUnknown.push(legacyPath(key));
        else if (av === SENSITIVE) current.sensitive.push(legacyPath(key));
        else flatAfter.set(key, av);
      }
      if (current.source.kind === 'text') current.source.lines.end = i + 1;
    }
  }
  finish();
  if (!changes.length && !summaryLine) return null;
  return {
    format: 'legacy_text',
    terraformVersion: null,
    changes,
    drift: [],
    summaryLine,
    noChanges: false,
    outputs: [],
    ...diagnostics(lines),
  };
}
