import { isPatternSpace, SEVERITY_RANK } from '@opsi/contracts';

/**
 * Text helpers of the built-in engine: reading ids out of text, and writing values exactly as the tools
 * returned them (money at two decimals, times as ISO dates in UTC), so every number in an answer can be
 * traced back to tool output.
 */

export const UUID_RE = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
export const ARN_RE = /\barn:aws[a-z-]*:[^\s"'`,;)]+/g;
export const NATIVE_RE =
  /\b(?:vol|i|sg|snap|eipalloc|nat|subnet|vpc|rtb|igw|lt|ami|eni)-[0-9a-f]{8,17}\b|\bAKIA[0-9A-Z]{16}\b/g;
export const CHECK_RE = /\b(?:finops|security|sre)\.[a-z0-9_]+\b/g;

/** How much of a prompt the built-in engine reads: its opening and its close, this many characters in all. */
export const PARSE_WINDOW = 1_200;

/**
 * A prompt as the built-in engine reads it: whitespace runs collapsed to one space (a scanner, not a
 * pattern), and past PARSE_WINDOW characters only its opening and its close, joined by a line break
 * (no pattern's `.` crosses it). Every pattern of the engine then runs over a bounded text, so reading
 * a prompt is linear in its length however its patterns backtrack (issue 24: a 20,000-character prompt
 * of spaces took 9.5 s); a question is asked in its first or last few sentences.
 */
export function readablePrompt(prompt: string): string {
  const out = collapseWhitespace(prompt);
  if (out.length <= PARSE_WINDOW) return out;
  const half = PARSE_WINDOW / 2;
  let head = out.slice(0, half);
  let tail = out.slice(out.length - half);
  // Cut at word boundaries, so no word is read half.
  const lastSpace = head.lastIndexOf(' ');
  if (lastSpace > half / 2) head = head.slice(0, lastSpace);
  const firstSpace = tail.indexOf(' ');
  if (firstSpace >= 0 && firstSpace < half / 2) tail = tail.slice(firstSpace + 1);
  return `${head}\n${tail}`;
}

/**
 * Overlapping windows of a text, each at most `size` characters, `overlap` shared with the next: a
 * pattern whose matches are shorter than `overlap` matches the text iff it matches one of them, and
 * testing each window costs a bound, so the whole is linear in the text's length.
 */
export function windowsOf(text: string, size = 1_000, overlap = 250): string[] {
  if (text.length <= size) return [text];
  const out: string[] = [];
  for (let at = 0; ; at += size - overlap) {
    out.push(text.slice(at, at + size));
    if (at + size >= text.length) return out;
  }
}

/** Whitespace runs as one space, trimmed: a scanner, linear in the text. */
export function collapseWhitespace(prompt: string): string {
  let out = '';
  let space = false;
  let start = 0;
  for (let i = 0; i < prompt.length; i++) {
    const c = prompt.charCodeAt(i);
    const isSpace = isPatternSpace(c);
    if (isSpace) {
      if (!space) out += prompt.slice(start, i);
      space = true;
    } else if (space) {
      if (out.length) out += ' ';
      start = i;
      space = false;
    }
  }
  if (!space) out += prompt.slice(start);
  return out;
}

export type IdKind = 'finding' | 'arn' | 'native';

export interface FoundId {
  kind: IdKind;
  id: string;
  at: number;
}

/** The ids a text mentions, in the order they appear (an id inside an ARN counts as the ARN). */
export function idsIn(text: string): FoundId[] {
  const found: FoundId[] = [];
  const taken: Array<[number, number]> = [];
  const overlaps = (a: number, b: number) => taken.some(([x, y]) => a < y && b > x);
  for (const [kind, re] of [
    ['arn', ARN_RE],
    ['finding', UUID_RE],
    ['native', NATIVE_RE],
  ] as const) {
    for (const m of text.matchAll(re)) {
      const id = m[0].replace(/[.:]+$/, '');
      const at = m.index ?? 0;
      if (overlaps(at, at + id.length)) continue;
      taken.push([at, at + id.length]);
      found.push({ kind, id, at });
    }
  }
  return found.sort((a, b) => a.at - b.at);
}

/** US dollars with cents and thousands separators: 5324.59 → "$5,324.59". */
export function money(value: unknown): string {
  const n = Number(value ?? 0);
  return `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** A number present in tool output, or null. */
export function num(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** A time as "2026-10-31 21:40 UTC" (an ISO date: not a quantity). */
export function when(value: unknown): string {
  if (value === null || value === undefined) return 'an unknown time';
  const d = value instanceof Date ? value : new Date(String(value));
  if (Number.isNaN(d.getTime())) return String(value);
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The short name of a CloudTrail actor: "alice" for …:user/alice, "ci-deployer/github-actions" for a role session. */
export function actorName(actor: string | null | undefined): string {
  if (!actor) return 'an unknown actor';
  const user = /:user\/([^/]+)$/.exec(actor);
  if (user) return user[1]!;
  const role = /:assumed-role\/(.+)$/.exec(actor);
  if (role) return role[1]!;
  return actor;
}

/** A plural noun for a count that is itself a tool value. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}

/** Splits a reply into deltas of a few words, keeping whitespace and newlines. */
export function chunks(text: string, words = 4): string[] {
  const parts = text.split(/(?<=\s)(?=\S)/);
  const out: string[] = [];
  for (let i = 0; i < parts.length; i += words) out.push(parts.slice(i, i + words).join(''));
  return out;
}

export function severityRank(severity: string | null | undefined): number {
  return (SEVERITY_RANK as Record<string, number>)[String(severity)] ?? 0;
}

/** Words in a text for matching: lowercase, ids kept whole and also split into their parts. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(/[a-z0-9]+(?:[-_./][a-z0-9]+)*/g)) {
    out.push(m[0]);
    if (/[-_./]/.test(m[0])) out.push(...m[0].split(/[-_./]+/).filter(Boolean));
  }
  return out;
}

/**
 * Whether two words match for retrieval: equal, one the other's plural ("ips", "ip"), or one a prefix
 * of the other when both are long.
 */
export function wordsMatch(a: string, b: string): boolean {
  if (a === b || a === `${b}s` || b === `${a}s`) return true;
  if (a.length < 4 || b.length < 4) return false;
  return a.startsWith(b) || b.startsWith(a);
}
