import { isPatternSpace } from '@opsi/contracts';
import {
  addressParts,
  type ParsedPlan,
  type Path,
  type PlanAction,
  type PlanDrift,
  type PlanResourceChange,
  type PlanSummaryLine,
} from './plan';
import { PLAN_LIMITS, tooDeep } from './limits';

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
 *
 * Speed (bench/plan-review, target 50 MB/s): the text is cleaned and split into lines once (line
 * numbers are array indexes, which is what annotations cite); after that, the readers scan each line
 * by index rather than trimming it, matching it with capture groups or slicing it into tokens, and a
 * string is made only for a key or a value that goes into the parse. Each hand-written matcher names
 * the regular expression it stands for; test/parse-text.differential.test.ts checks, over fixtures,
 * generated and damaged plans, that the parse is the one the regex-per-line parser gave.
 */

const UNKNOWN = Symbol('known after apply');
const SENSITIVE = Symbol('sensitive');
const ABSENT = undefined;

/**
 * The line without ANSI escapes, as `line.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g, '')`
 * would give it, in one pass: that expression looks for a BEL from every `ESC ]` again, so a line of
 * `ESC ]` without a BEL took time quadratic in its length (issue 24). Here the next BEL is found
 * once and reused until the scan passes it.
 */
function stripAnsi(line: string): string {
  let out = '';
  let from = 0; // the start of the text not yet copied
  let bel = -2; // the next BEL at or after the scan (-1: none; -2: not looked for yet)
  let i = line.indexOf('\x1b');
  while (i >= 0) {
    const next = line.charCodeAt(i + 1);
    let end = -1; // the index after the escape, when one starts at i
    if (next === 91 /* [ */) {
      let k = i + 2;
      for (
        let c = line.charCodeAt(k);
        (c >= 48 && c <= 57) || c === 59 || c === 63;
        c = line.charCodeAt(++k)
      );
      const c = line.charCodeAt(k);
      if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) end = k + 1;
    } else if (next === 93 /* ] */) {
      if (bel === -2 || (bel >= 0 && bel < i)) bel = line.indexOf('\x07', i + 2);
      if (bel >= 0) end = bel + 1;
    }
    if (end < 0) {
      i = line.indexOf('\x1b', i + 1);
      continue;
    }
    out += line.slice(from, i);
    from = end;
    i = line.indexOf('\x1b', end);
  }
  return from === 0 ? line : out + line.slice(from);
}
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
  // Colours and carriage returns are looked for line by line only when the text has some.
  const colours = text.includes('\x1b');
  const returns = text.includes('\r');
  for (let k = 0; k < lines.length; k++) {
    let line = lines[k]!;
    if (colours && line.includes('\x1b')) line = stripAnsi(line);
    if (returns) {
      const cr = line.lastIndexOf('\r', line.length - 2);
      if (cr >= 0) line = line.slice(cr + 1);
    }
    // Only lines that start like a prefix are tried against the prefixes (most lines do not).
    const c = line.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 115 /* s */ || c === 91 /* [ */)
      for (const p of CI_PREFIXES) line = line.replace(p, '');
    if (isSpace(line.charCodeAt(line.length - 1))) line = line.trimEnd();
    lines[k] = line;
  }
  return lines;
}

/** The phrases that end a resource header, each after a space (`has moved to …` is read apart). */
const HEADER_PHRASES = [
  'will be created',
  'will be destroyed',
  'will be updated in-place',
  'must be replaced',
  'is tainted, so must be replaced',
  'will be replaced, as requested',
  'will be replaced due to changes in replace_triggered_by',
  'will be read during apply',
  'will be imported',
  'will no longer be managed by Terraform',
  'will no longer be managed by Terraform, but will not be destroyed',
  'has changed',
  'has been changed',
  'has been deleted',
];
const MOVED = ' has moved to ';
const NOTE = /^\s*# \((.*)\)$/;
const SUMMARY =
  /^\s*Plan: (?:(\d+) to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy(?:, (\d+) to forget)?\.?/;
/** SUMMARY at the first non-space of a line (lastIndex), without `^\s*`. */
const SUMMARY_AT =
  /Plan: (?:(\d+) to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy(?:, (\d+) to forget)?\.?/y;
const VERSION_AT = /Terraform v(\d+\.\d+\.\d+\S*)/y;
const DEPOSED = /^(.*) \(deposed object ([0-9a-f]+)\)$/;

interface Header {
  address: string;
  phrase: string;
  movedTo: string | null;
  deposed: string | null;
  line: number;
}

/**
 * A resource header, as /^\s*# (.+?) (will be created|…|has moved to (.+)|…)$/ reads it: the address
 * ends at the first place where a phrase ends the line, or where ` has moved to ` starts. That
 * expression tried the phrases from every character and rescanned the rest of the line for `(.+)$`
 * from every ` has moved to `: quadratic on a line of them that could not end (issue 24).
 */
function readHeader(line: string, index: number): Header | null {
  const s = skipSpace(line, 0, line.length);
  if (!line.startsWith('# ', s)) return null;
  const body = s + 2;
  // `.` matches neither U+2028 nor U+2029, and `$` only the end: a header holds none after `# `.
  if (lastSeparator(line) >= body) return null;
  let at = -1;
  let phrase = '';
  for (const p of HEADER_PHRASES) {
    const k = line.length - p.length - 1;
    if (k > body && (at < 0 || k < at) && line.charCodeAt(k) === 32 && line.endsWith(p)) {
      at = k;
      phrase = p;
    }
  }
  let movedTo: string | null = null;
  const moved = line.indexOf(MOVED, body + 1);
  if (moved >= 0 && moved + MOVED.length < line.length && (at < 0 || moved < at)) {
    at = moved;
    movedTo = line.slice(moved + MOVED.length);
    phrase = `has moved to ${movedTo}`;
  }
  if (at < 0) return null;
  let address = line.slice(body, at);
  let deposed: string | null = null;
  const d = address.endsWith(')') ? DEPOSED.exec(address) : null;
  if (d) {
    address = d[1]!;
    deposed = d[2]!;
  }
  return { address, phrase, movedTo, deposed, line: index };
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
const NOTE_REASONS = [...DELETE_REASONS, ...READ_REASONS];

// ---------------------------------------------------------------- values
//
// The block readers below scan each line by index instead of trimming it, splitting it or matching it
// with capture groups: a plan is mostly `key = value` lines, and a string per trimmed line and per
// captured group was most of the parser's time (in garbage collection). Each hand-written matcher
// says which regular expression it stands for; those expressions still run, unchanged, on the rare
// lines the matchers do not cover (nested block headers, heredoc and wrapper openers, closing arrows).

interface Diff {
  before: unknown;
  after: unknown;
}

interface Parsed extends Diff {
  /** The last line the value used. */
  end: number;
}

const isSpace = isPatternSpace;

/** The first index in [pos, end) that is not a space (end when none). */
function skipSpace(s: string, pos: number, end: number): number {
  while (pos < end && isSpace(s.charCodeAt(pos))) pos++;
  return pos;
}

/** `end` moved back over trailing spaces, not before `start`. */
function backSpace(s: string, start: number, end: number): number {
  while (end > start && isSpace(s.charCodeAt(end - 1))) end--;
  return end;
}

/**
 * Whether the posted text holds U+2028 or U+2029, which `.` in a regular expression does not match
 * (cleaned lines hold no \n or \r): only then do the matchers look for them where the expressions
 * they stand for end in `.*$`. Set by parsePlanText for the parse under way (parsing is synchronous).
 */
let separators = false;
function dotsToEnd(s: string, pos: number, end: number): boolean {
  if (!separators) return true;
  for (; pos < end; pos++) {
    const c = s.charCodeAt(pos);
    if (c === 0x2028 || c === 0x2029) return false;
  }
  return true;
}

/**
 * A resource block's opening line, as /^\s*(-\/\+|\+\/-|<=|[+~.-])?\s*(resource|data) "([^"]+)" "([^"]+)" \{(.*)$/
 * reads it: answers the action symbol ('' when none) and the text after the brace, or null. The
 * expression's two `\s*` around an optional symbol backtracked over each other, quadratic on a long
 * run of spaces (issue 24); this scans the line once.
 */
function readBlockOpen(line: string): { sym: string; rest: string } | null {
  const end = line.length;
  let k = skipSpace(line, 0, end);
  let sym = '';
  for (const candidate of ['-/+', '+/-', '<=', '+', '~', '.', '-']) {
    if (line.startsWith(candidate, k)) {
      sym = candidate;
      break;
    }
  }
  k = skipSpace(line, k + sym.length, end);
  if (line.startsWith('resource "', k)) k += 10;
  else if (line.startsWith('data "', k)) k += 6;
  else return null;
  for (let part = 0; part < 2; part++) {
    const close = line.indexOf('"', k);
    if (close <= k) return null;
    k = close + 1;
    if (part === 0) {
      if (!line.startsWith(' "', k)) return null;
      k += 2;
    }
  }
  if (!line.startsWith(' {', k)) return null;
  k += 2;
  return dotsToEnd(line, k, end) ? { sym, rest: line.slice(k) } : null;
}

const FORCES_MARK = ' # forces replacement';
/** Whether s[start, end) ends with ` # forces replacement`. */
function endsWithForces(s: string, start: number, end: number): boolean {
  return end - start >= FORCES_MARK.length && s.startsWith(FORCES_MARK, end - FORCES_MARK.length);
}

// The result of readScalar, in place of an object per scalar.
let scalarValue: unknown;
let scalarEnd = 0;
const TOKENS: ReadonlyArray<readonly [string, symbol]> = [
  ['(known after apply)', UNKNOWN],
  ['(sensitive value)', SENSITIVE],
  ['(sensitive)', SENSITIVE],
];
const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

/**
 * One scalar token at `pos` of s[…end) after spaces: a string, number, bool, null or a Terraform
 * placeholder. Leaves it in scalarValue and the index after it in scalarEnd; false when there is none.
 */
function readScalar(s: string, pos: number, end: number = s.length): boolean {
  while (pos < end && s.charCodeAt(pos) === 32) pos++;
  if (pos >= end) return false;
  const c = s.charCodeAt(pos);
  if (c === 34 /* " */) {
    let i = pos + 1;
    let plain = true; // no escapes or control characters: the JSON string is its own content
    while (i < end) {
      const d = s.charCodeAt(i);
      if (d === 34) break;
      if (d === 92 /* \ */) {
        plain = false;
        i += 2;
      } else {
        if (d < 32) plain = false;
        i++;
      }
    }
    if (plain && i < end) {
      scalarValue = s.slice(pos + 1, i);
    } else {
      // Escapes, or no closing quote: JSON decides; what it refuses is kept as written.
      const raw = s.slice(pos, Math.min(i + 1, end));
      try {
        scalarValue = JSON.parse(raw);
      } catch {
        scalarValue = raw.slice(1, -1);
      }
    }
    scalarEnd = i + 1;
    return true;
  }
  if (c === 40 /* ( */) {
    for (const [token, value] of TOKENS) {
      if (pos + token.length <= end && s.startsWith(token, pos)) {
        scalarValue = value;
        scalarEnd = pos + token.length;
        return true;
      }
    }
  }
  // A word: /^[^\s,]+/
  let k = pos;
  while (k < end) {
    const d = s.charCodeAt(k);
    if (d === 44 /* , */ || isSpace(d)) break;
    k++;
  }
  if (k === pos) return false;
  const word = s.slice(pos, k);
  let value: unknown = word;
  if (word === 'null') value = null;
  else if (word === 'true') value = true;
  else if (word === 'false') value = false;
  else if ((c === 45 || (c >= 48 && c <= 57)) && NUMBER.test(word)) value = Number(word);
  scalarValue = value;
  scalarEnd = k;
  return true;
}

// Where matchAttr's key ends.
let keyEnd = 0;

/**
 * `key = value` at `pos` to the end of `s`, as /^("(?:[^"\\]|\\.)*"|[^\s=]+)\s+=\s?(.*)$/ would match
 * it: answers where the value starts (the key is s[pos, keyEnd)), or -1.
 */
function matchAttr(s: string, pos: number): number {
  const end = s.length;
  if (s.charCodeAt(pos) === 34) {
    // A quoted key; if what follows it is not ` = `, the unquoted form below is tried, as in the expression.
    let i = pos + 1;
    while (i < end) {
      const d = s.charCodeAt(i);
      if (d === 34) break;
      if (d === 92) {
        const e = s.charCodeAt(i + 1);
        if (i + 1 >= end || e === 0x2028 || e === 0x2029) i = end;
        else i += 2;
      } else i++;
    }
    if (i < end) {
      const v = afterKey(s, i + 1);
      if (v >= 0) {
        keyEnd = i + 1;
        return v;
      }
    }
  }
  let k = pos;
  while (k < end) {
    const d = s.charCodeAt(k);
    if (d === 61 /* = */ || isSpace(d)) break;
    k++;
  }
  if (k === pos) return -1;
  const v = afterKey(s, k);
  if (v >= 0) keyEnd = k;
  return v;
}

/** `\s+=\s?(.*)$` at `k`: where the value starts, or -1. */
function afterKey(s: string, k: number): number {
  const end = s.length;
  if (k >= end || !isSpace(s.charCodeAt(k))) return -1;
  k = skipSpace(s, k, end);
  if (s.charCodeAt(k) !== 61) return -1;
  k++;
  if (k < end && isSpace(s.charCodeAt(k))) k++;
  return dotsToEnd(s, k, end) ? k : -1;
}

/** A key as Terraform printed it, unquoted: `"Name"` is Name. */
function keyText(s: string, pos: number, end: number): string {
  if (s.charCodeAt(pos) !== 34) return s.slice(pos, end);
  let plain = end - pos >= 2 && s.charCodeAt(end - 1) === 34;
  for (let k = pos + 1; plain && k < end - 1; k++) {
    const c = s.charCodeAt(k);
    if (c === 34 || c === 92 || c < 32) plain = false;
  }
  if (plain) return s.slice(pos + 1, end - 1);
  // Escapes: JSON decides; a key it refuses (`"a\q"`, a cut-off `"a`) is kept as written, as values are.
  const raw = s.slice(pos, end);
  try {
    return String(JSON.parse(raw));
  } catch {
    return raw.length >= 2 && raw.charCodeAt(raw.length - 1) === 34 ? raw.slice(1, -1) : raw.slice(1);
  }
}

const BLOCK = /([A-Za-z_][\w-]*)((?: "[^"]*")*) \{(\})?(\s+# forces replacement)?$/y;
const HEREDOC = /^<<(-?)([A-Za-z_]\w*)$/;
const WRAPPER = /^(jsonencode|yamlencode|toset|tolist|tomap|sensitive|base64encode)\($/;
const WRAPPER_ONE_LINE = /^(jsonencode|toset|tolist|tomap)\((.*)\)$/;

/** The index of the last U+2028 or U+2029 in s (-1 when none, or when the text has none). */
function lastSeparator(s: string): number {
  return separators ? Math.max(s.lastIndexOf('\u2028'), s.lastIndexOf('\u2029')) : -1;
}

/**
 * The end of a value that runs from `a` to the end of `s` and may close with ` # forces replacement`,
 * as the lazy `(.*?)(?:\s+# forces replacement)?$` ends it: before the spaces ahead of the mark when
 * there are some and the value is not empty without them.
 */
function beforeForcesMark(s: string, a: number): number {
  const mark = '# forces replacement';
  const f = s.length - mark.length;
  if (f <= a || !s.endsWith(mark)) return s.length;
  const g = backSpace(s, a, f);
  return g < f && g > a ? g : s.length;
}

/**
 * A container's closing line with an arrow, as /[\]})]\s*->\s*(.+?)(\s+# forces replacement)?$/
 * reads it: answers the text after the arrow (null when none). That expression, tried from every
 * bracket of the line, scanned the rest of the line from each: quadratic (issue 24).
 */
function closingArrow(s: string): string | null {
  const end = s.length;
  const sep = lastSeparator(s);
  for (let p = 0; p < end; p++) {
    const c = s.charCodeAt(p);
    if (c !== 93 && c !== 125 && c !== 41) continue;
    const k = skipSpace(s, p + 1, end);
    if (s.charCodeAt(k) !== 45 || s.charCodeAt(k + 1) !== 62) continue;
    const a = skipSpace(s, k + 2, end);
    if (a >= end || sep >= a) continue;
    return s.slice(a, beforeForcesMark(s, a));
  }
  return null;
}

/**
 * A heredoc's closing line (trimmed), as
 * new RegExp(`^${marker}(?:\\s*->\\s*(.*?))?(?:\\s+# forces replacement)?$`) reads it: null when it
 * is not one, else the text after an arrow (undefined when there is no arrow). The expression's lazy
 * value before an optional mark was quadratic on a long run of spaces (issue 24).
 */
function heredocClose(t: string, marker: string): { after: string | undefined } | null {
  if (!t.startsWith(marker)) return null;
  const end = t.length;
  let k = marker.length;
  if (k === end) return { after: undefined };
  const arrow = skipSpace(t, k, end);
  if (t.charCodeAt(arrow) === 45 && t.charCodeAt(arrow + 1) === 62) {
    const a = skipSpace(t, arrow + 2, end);
    if (lastSeparator(t) < a) return { after: t.slice(a, beforeForcesMark(t, a)) };
  }
  // No arrow: only the mark may follow the marker.
  k = skipSpace(t, k, end);
  return k > marker.length && t.startsWith('# forces replacement', k) && k + 20 === end
    ? { after: undefined }
    : null;
}

class BodyParser {
  replacePaths: Path[] = [];
  /** The path of the value being read (keys and indexes), pushed and popped as the readers descend. */
  private readonly path: Path = [];
  /** The action symbol restOf found. */
  private sym = '';

  constructor(private readonly lines: string[]) {}

  /**
   * The action symbol at `s` (the first non-space of `line`) into this.sym — '+', '-', '~', '-/+',
   * '+/-', '<=' or '' — as /^(-\/\+|\+\/-|<=|[+~-])\s+(.*)$/ would read it; answers where the rest starts.
   */
  private restOf(line: string, s: number): number {
    this.sym = '';
    const c = line.charCodeAt(s);
    // '+', '-', '~', '<', '.'
    if (c !== 43 && c !== 45 && c !== 126 && c !== 60 && c !== 46) return s;
    const c1 = line.charCodeAt(s + 1);
    let sym: string;
    if (c === 45 && c1 === 47 && line.charCodeAt(s + 2) === 43) sym = '-/+';
    else if (c === 43 && c1 === 47 && line.charCodeAt(s + 2) === 45) sym = '+/-';
    else if (c === 60 && c1 === 61) sym = '<=';
    else if (c === 43) sym = '+';
    else if (c === 126) sym = '~';
    else if (c === 45) sym = '-';
    else return s;
    const k = s + sym.length;
    if (k >= line.length || !isSpace(line.charCodeAt(k))) return s;
    const r = skipSpace(line, k, line.length);
    if (!dotsToEnd(line, r, line.length)) return s;
    this.sym = sym;
    return r;
  }

  /** /^}\s*(#.*)?$/ at `s`. */
  private closes(line: string, s: number): boolean {
    const k = skipSpace(line, s + 1, line.length);
    if (k === line.length) return true;
    return line.charCodeAt(k) === 35 && dotsToEnd(line, k, line.length);
  }

  /**
   * The attributes and blocks of a block body from line `i` to its closing `}`; answers the index of
   * that closing line.
   */
  parseBody(i: number): { before: Record<string, unknown>; after: Record<string, unknown>; end: number } {
    this.enter(i);
    try {
      return this.readBody(i);
    } finally {
      this.depth--;
    }
  }

  /** Nesting of blocks and values being read: capped (PLAN_LIMITS.depth), as each level is a call. */
  private depth = 0;
  private enter(i: number) {
    if (++this.depth > PLAN_LIMITS.depth) throw tooDeep(`text, at line ${i + 1}`);
  }

  private readBody(i: number): {
    before: Record<string, unknown>;
    after: Record<string, unknown>;
    end: number;
  } {
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    const pushBlock = (target: Record<string, unknown>, key: string, value: unknown) => {
      if (value === ABSENT) return;
      const list = (target[key] as unknown[] | undefined) ?? [];
      list.push(value);
      target[key] = list;
    };
    const lines = this.lines;
    for (; i < lines.length; i++) {
      const line = lines[i]!; // cleaned: no trailing spaces
      const s = skipSpace(line, 0, line.length);
      if (s === line.length) continue;
      const c = line.charCodeAt(s);
      if (c === 125 /* } */ && this.closes(line, s)) return { before, after, end: i };
      if (c === 35 /* # */) continue; // (N unchanged … hidden)
      const r = this.restOf(line, s);
      const sym = this.sym;
      // A nested block: `ingress {`, `rule "name" {`, `timeouts {}`.
      const last = line.charCodeAt(line.length - 1);
      let block: RegExpExecArray | null = null;
      if (last === 123 || last === 125 || endsWithForces(line, r, line.length)) {
        BLOCK.lastIndex = r;
        block = BLOCK.exec(line);
      }
      if (block) {
        const key = block[1]!;
        const index = ((sym === '+' ? after : before)[key] as unknown[] | undefined)?.length ?? 0;
        this.path.push(key, index);
        if (block[4]) this.replacePaths.push(this.path.slice());
        let inner: Diff;
        if (block[3]) {
          inner = { before: {}, after: {} };
        } else {
          const body = this.parseBody(i + 1);
          i = body.end;
          if (lines[i]!.endsWith(FORCES_MARK)) this.replacePaths.push(this.path.slice());
          inner = body;
        }
        this.path.length -= 2;
        pushBlock(before, key, sym === '+' ? ABSENT : inner.before);
        pushBlock(after, key, sym === '-' ? ABSENT : inner.after);
        continue;
      }
      const v = matchAttr(line, r);
      if (v < 0) continue; // a line we do not understand is skipped, never fatal
      const key = keyText(line, r, keyEnd);
      this.path.push(key);
      const parsed = this.parseValue(line, v, line.length, i);
      this.path.pop();
      i = parsed.end;
      if (sym !== '+' && parsed.before !== ABSENT) before[key] = parsed.before;
      if (sym !== '-' && parsed.after !== ABSENT) after[key] = parsed.after;
    }
    return { before, after, end: lines.length - 1 };
  }

  /** A value in s[start, end) (the rest of line `i`); answers it and the last line it used. */
  parseValue(s: string, start: number, end: number, i: number): Parsed {
    this.enter(i);
    try {
      return this.readValue(s, start, end, i);
    } finally {
      this.depth--;
    }
  }

  private readValue(s: string, start: number, end: number, i: number): Parsed {
    let forces = false;
    if (endsWithForces(s, start, end)) {
      forces = true;
      end = backSpace(s, start, end - FORCES_MARK.length);
    }
    // The value trimmed is s[ts, te).
    const ts = skipSpace(s, start, end);
    const te = backSpace(s, ts, end);
    const c0 = ts < te ? s.charCodeAt(ts) : -1;
    const last = ts < te ? s.charCodeAt(te - 1) : -1;
    let m: RegExpExecArray | null;
    let result: Parsed;
    if (c0 === 60 /* < */ && (m = HEREDOC.exec(s.slice(ts, te)))) {
      result = this.parseHeredoc(i, m[2]!);
    } else if (te - ts === 1 && (c0 === 91 || c0 === 123)) {
      result = c0 === 91 ? this.parseList(i + 1) : this.parseMap(i + 1);
    } else if (last === 40 /* ( */ && WRAPPER.test(s.slice(ts, te))) {
      result = this.parseWrapped(i);
    } else if ((c0 === 91 && s.charCodeAt(ts + 1) === 93) || (c0 === 123 && s.charCodeAt(ts + 1) === 125)) {
      // `[]`, `{}`, and `[] -> …` (/^(\[\]|\{\})\s*->\s*(.*)$/)
      const v = c0 === 91 ? [] : {};
      result = { before: v, after: v, end: i };
      const k = skipSpace(s, ts + 2, te);
      if (k + 1 < te && s.charCodeAt(k) === 45 && s.charCodeAt(k + 1) === 62) {
        const a = skipSpace(s, k + 2, te);
        if (dotsToEnd(s, a, te))
          result = { before: v, after: readScalar(s, a, te) ? scalarValue : ABSENT, end: i };
      }
    } else if (
      (c0 === 106 || c0 === 116) /* j, t */ &&
      last === 41 /* ) */ &&
      (m = WRAPPER_ONE_LINE.exec(s.slice(ts, te))) &&
      !includesArrow(s, start, end)
    ) {
      const v = looseJson(m[2]!);
      result = { before: v, after: v, end: i };
    } else {
      if (!readScalar(s, start, end)) return { before: ABSENT, after: ABSENT, end: i };
      const first = scalarValue;
      // ` -> ` and the value after it (/^\s*->\s*/)
      const k = skipSpace(s, scalarEnd, end);
      if (k + 1 < end && s.charCodeAt(k) === 45 && s.charCodeAt(k + 1) === 62) {
        const a = skipSpace(s, k + 2, end);
        const ca = s.charCodeAt(a);
        if (
          a < end &&
          (ca === 91 ||
            ca === 123 ||
            (a + 2 <= end && s.startsWith('<<', a)) ||
            (a + 11 <= end && s.startsWith('jsonencode(', a)))
        ) {
          const second = this.parseValue(s, a, end, i);
          result = { before: first, after: second.after, end: second.end };
        } else {
          result = { before: first, after: readScalar(s, a, end) ? scalarValue : ABSENT, end: i };
        }
      } else {
        result = { before: first, after: first, end: i };
      }
    }
    // A container's closing line may carry `-> (known after apply)` or the replacement mark.
    if (result.end !== i) {
      const closing = this.lines[result.end] ?? '';
      if (closing.endsWith(FORCES_MARK)) forces = true;
      const arrow = closing.includes('->') ? closingArrow(closing) : null;
      if (arrow !== null) result.after = readScalar(arrow, 0) ? scalarValue : ABSENT;
    }
    if (forces) this.replacePaths.push(this.path.slice());
    return result;
  }

  /** The line at `i` cleaned and the start of its text (its length when blank or past the end). */
  private text(i: number): { line: string; s: number } {
    const line = this.lines[i] ?? '';
    return { line, s: skipSpace(line, 0, line.length) };
  }

  private parseList(i: number): Parsed {
    const before: unknown[] = [];
    const after: unknown[] = [];
    const lines = this.lines;
    for (; i < lines.length; i++) {
      const line = lines[i]!;
      const s = skipSpace(line, 0, line.length);
      if (s === line.length) continue;
      const c = line.charCodeAt(s);
      if (c === 93 || c === 125 || c === 41) return { before, after, end: i }; // ] } )
      if (c === 35) continue;
      const r = this.restOf(line, s);
      const sym = this.sym;
      const e = line.charCodeAt(line.length - 1) === 44 ? line.length - 1 : line.length; // a trailing ','
      this.path.push(after.length);
      const v = this.parseValue(line, r, e, i);
      this.path.pop();
      i = v.end;
      if (sym !== '+' && v.before !== ABSENT) before.push(v.before);
      if (sym !== '-' && v.after !== ABSENT) after.push(v.after);
    }
    return { before, after, end: lines.length - 1 };
  }

  private parseMap(i: number): Parsed {
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    const lines = this.lines;
    for (; i < lines.length; i++) {
      const line = lines[i]!;
      const s = skipSpace(line, 0, line.length);
      if (s === line.length) continue;
      const c = line.charCodeAt(s);
      if (c === 93 || c === 125 || c === 41) return { before, after, end: i };
      if (c === 35) continue;
      const r = this.restOf(line, s);
      const sym = this.sym;
      // An object inside a list or jsonencode without a key: `{` … `}`.
      const v0 = matchAttr(line, r);
      if (v0 < 0) continue;
      const key = keyText(line, r, keyEnd);
      const e = line.length > v0 && line.charCodeAt(line.length - 1) === 44 ? line.length - 1 : line.length;
      this.path.push(key);
      const v = this.parseValue(line, v0, e, i);
      this.path.pop();
      i = v.end;
      if (sym !== '+' && v.before !== ABSENT) before[key] = v.before;
      if (sym !== '-' && v.after !== ABSENT) after[key] = v.after;
    }
    return { before, after, end: lines.length - 1 };
  }

  /** `jsonencode(` … `)`: one value inside, itself rendered as a diff. */
  private parseWrapped(i: number): Parsed {
    let j = i + 1;
    while (j < this.lines.length && this.text(j).s === this.lines[j]!.length) j++;
    const { line, s } = this.text(j);
    const r = this.restOf(line, s);
    const sym = this.sym;
    const inner = this.parseValue(line, r, line.length, j);
    let end = inner.end + 1;
    for (; end < this.lines.length; end++) {
      const t = this.text(end);
      if (t.line.charCodeAt(t.s) === 41 /* ) */) break;
    }
    return {
      before: sym === '+' ? ABSENT : inner.before,
      after: sym === '-' ? ABSENT : inner.after,
      end: Math.min(end, this.lines.length - 1),
    };
  }

  /** A heredoc; in an update its lines carry `+`/`-` in a column of their own. */
  private parseHeredoc(i: number, marker: string): Parsed {
    const before: string[] = [];
    const after: string[] = [];
    let j = i + 1;
    let closedAfter: unknown = ABSENT;
    let closedWithArrow = false;
    for (; j < this.lines.length; j++) {
      const line = this.lines[j]!;
      const close = heredocClose(line.trim(), marker);
      if (close) {
        if (close.after !== undefined) {
          closedWithArrow = true;
          closedAfter = readScalar(close.after, 0) ? scalarValue : ABSENT;
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

/** Whether s[start, end) holds ` -> `. */
function includesArrow(s: string, start: number, end: number): boolean {
  const k = s.indexOf(' -> ', start);
  return k >= 0 && k + 4 <= end;
}

function looseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Removes the placeholders in place (the values are the parser's own), listing where each kind was:
 * one walk for both (an element of a list becomes null, a key of an object goes).
 */
function extract(value: unknown, path: Path, unknown: Path[], sensitive: Path[]): unknown {
  if (value === UNKNOWN) {
    unknown.push([...path]);
    return ABSENT;
  }
  if (value === SENSITIVE) {
    sensitive.push([...path]);
    return ABSENT;
  }
  if (Array.isArray(value)) {
    for (let k = 0; k < value.length; k++) {
      const v: unknown = value[k];
      if (v === null || (typeof v !== 'object' && typeof v !== 'symbol')) continue;
      path.push(k);
      value[k] = extract(v, path, unknown, sensitive) ?? null;
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
      const x = extract(v, path, unknown, sensitive);
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
  return extract(raw, [], unknown, sensitive) as Record<string, unknown>;
}

const uniquePaths = (paths: Path[]): Path[] => {
  if (paths.length < 2) return paths;
  const seen = new Set<string>();
  return paths.filter((p) => {
    const key = JSON.stringify(p);
    return !seen.has(key) && seen.add(key);
  });
};

// ---------------------------------------------------------------- document

/** Whether the text being parsed may hold diagnostics (set by parsePlanText, as `separators`). */
let diagnosticsPossible = true;

function diagnostics(lines: string[]): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!diagnosticsPossible) return { errors, warnings };
  for (let i = 0; i < lines.length; i++) {
    // Only a line whose text (after the box-drawing gutter) starts with E or W can be one.
    const line = lines[i]!;
    let k = 0;
    for (let c = line.charCodeAt(0); c === 0x2502 || c === 0x2577 || isSpace(c); c = line.charCodeAt(++k));
    const c = line.charCodeAt(k);
    if (c !== 69 && c !== 87) continue;
    const m = /^[│╷\s]*(Error|Warning): (.+)$/.exec(line);
    if (!m) continue;
    (m[1] === 'Error' ? errors : warnings).push(m[2]!.trim());
  }
  return { errors, warnings };
}

/** Parses `terraform plan` text (0.12 to 1.x; 0.11 tolerated); null when the text is not a plan. */
export function parsePlanText(text: string): ParsedPlan | null {
  separators = text.includes('\u2028') || text.includes('\u2029');
  // Without colours (whose removal can join text), a cleaned line is a piece of a posted one: when
  // the text holds neither "Error: " nor "Warning: ", no line is a diagnostic.
  diagnosticsPossible = text.includes('\x1b') || text.includes('Error: ') || text.includes('Warning: ');
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
    // The markers are told apart by the first character of the line's text.
    const s = skipSpace(line, 0, line.length);
    if (s === line.length) continue;
    const c = line.charCodeAt(s);
    if (c === 84 /* T */) {
      VERSION_AT.lastIndex = s;
      const version = VERSION_AT.exec(line);
      if (version) terraformVersion = version[1]!;
    }
    if (c === 78 /* N */ && line.startsWith('Note: Objects have changed outside of Terraform', s)) {
      section = 'drift';
      sawMarker = true;
      continue;
    }
    if (
      (c === 85 /* U */ &&
        line.startsWith('Unless you have made equivalent changes to your configuration', s)) ||
      (c === 84 && line.startsWith('This is a refresh-only plan', s))
    ) {
      section = 'none';
      continue;
    }
    if (
      c === 84 &&
      (line.startsWith('Terraform will perform the following actions', s) ||
        line.startsWith('Terraform planned the following actions', s))
    ) {
      section = 'actions';
      sawMarker = true;
      continue;
    }
    if (c === 67 /* C */ && line.startsWith('Changes to Outputs:', s)) {
      section = 'outputs';
      sawMarker = true;
      continue;
    }
    SUMMARY_AT.lastIndex = s;
    const summary = c === 80 /* P */ ? SUMMARY_AT.exec(line) : null;
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
      c === 78 &&
      (line.startsWith('No changes. Your infrastructure matches the configuration', s) ||
        line.startsWith('No changes. Infrastructure is up-to-date', s))
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
    const header = c === 35 /* # */ ? readHeader(line, i) : null;
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
    while (j < lines.length && skipSpace(lines[j]!, 0, lines[j]!.length) === lines[j]!.length) j++;
    const open = readBlockOpen(lines[j] ?? '');
    const parser = new BodyParser(lines);
    let end = j - 1;
    let before: Record<string, unknown> | null = null;
    let after: Record<string, unknown> | null = null;
    let sym = '';
    if (open) {
      sym = open.sym;
      const inline = open.rest.trim();
      if (inline === '}') {
        before = {};
        after = {};
        end = j;
      } else {
        const body = parser.parseBody(j + 1);
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
      for (const [re, r] of NOTE_REASONS) if (re.test(note)) reason = r;
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
  /^\s*(-\/\+|[+~-]|<=)\s+((?:module\.[\w-]+\.)*(?:data\.)?[A-Za-z][\w-]*\.[\w-]+(?:\[\d+\]|\.\d+)?)((?:\s+\((?:new resource required|tainted|deposed)\))*)\s*$/;

/**
 * A 0.11 attribute line, as /^\s{4,}(\S+):\s+(.*?)\s*$/ reads it: its key and value, or null. The
 * expression's lazy value before `\s*$` rescanned every run of spaces inside the value from each of
 * its characters: quadratic (issue 24).
 */
function legacyAttr(line: string): { key: string; value: string } | null {
  const end = line.length;
  const s = skipSpace(line, 0, end);
  if (s < 4 || s === end) return null;
  let k = s;
  while (k < end && !isSpace(line.charCodeAt(k))) k++;
  // The key is the run of non-spaces up to its last character, which must be ':'.
  if (k - s < 2 || line.charCodeAt(k - 1) !== 58 || k === end) return null;
  const v = skipSpace(line, k, end);
  const e = backSpace(line, v, end);
  if (separators)
    for (let i = v; i < e; i++)
      if (line.charCodeAt(i) === 0x2028 || line.charCodeAt(i) === 0x2029) return null;
  return { key: line.slice(s, k - 1), value: line.slice(v, e) };
}

function legacyValue(text: string): unknown {
  const t = text.trim();
  if (t === '<computed>') return UNKNOWN;
  if (t === '<sensitive>') return SENSITIVE;
  return (readScalar(t, 0) ? scalarValue : undefined) ?? t;
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
        reason: h[3]!.includes('(tainted)')
          ? 'replace_because_tainted'
          : h[3]!.includes('(deposed)')
            ? 'deposed'
            : action === 'replace'
              ? 'replace_because_cannot_update'
              : null,
        replacePaths: [],
        movedFrom: null,
        importing: null,
        deposed: h[3]!.includes('(deposed)') ? '' : null,
        before: action === 'create' || action === 'read' ? null : {},
        after: action === 'delete' ? null : {},
        afterUnknown: [],
        sensitive: [],
        source: { kind: 'text', lines: { start: i + 1, end: i + 1 } },
      };
      changes.push(current);
      continue;
    }
    const attr = current ? legacyAttr(line) : null;
    if (attr && current) {
      const key = attr.key;
      let value = attr.value;
      if (value.endsWith('(forces new resource)')) {
        current.replacePaths.push(legacyPath(key));
        // The value without the mark and the spaces before it (a slice, not /\s*\(…\)$/, which
        // rescanned a run of spaces from each of them).
        value = value.slice(0, backSpace(value, 0, value.length - '(forces new resource)'.length));
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
