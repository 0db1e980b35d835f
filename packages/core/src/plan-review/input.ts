import { PLAN_LIMITS, tooDeep } from './limits';

/*
 * Plan files as CI produces them (decisions.md, Wave 3, "Plan files, as CI produces them"): a
 * byte-order mark, UTF-16 that reached us as text with a NUL after each character (PowerShell's
 * `terraform plan > plan.txt` writes UTF-16 LE with a BOM; a client that read it as UTF-8 sends NULs),
 * and the framing of hashicorp/setup-terraform's wrapper (wrapper/terraform.js and
 * lib/output-listener.js up to v2: `[command]<path>/terraform-bin <args>` before the output, then
 * `::debug::Terraform exited with code N.`, `::debug::stdout: <output>`, `::debug::stderr: …`,
 * `::debug::exitcode: N` from core.debug and `::set-output name=stdout::<output>` from older
 * @actions/core, the output escaped as workflow commands escape data: % → %25, CR → %0D, LF → %0A).
 * Everything here is a single pass over the text.
 */

/** The text as Terraform wrote it: no byte-order mark, and UTF-16 read as single bytes recovered. */
export function decodePlanText(input: string): string {
  let text = input;
  // A BOM decoded as UTF-16 (U+FEFF), or UTF-16's BOM bytes decoded as UTF-8 (two U+FFFD) or Latin-1.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  else if (/^(?:\uFFFD\uFFFD|\u00FF\u00FE|\u00FE\u00FF)/.test(text)) text = text.slice(2);
  if (!text.includes('\u0000')) return text;
  // UTF-16 of ASCII, read a byte at a time, has a NUL every other character: drop them.
  const sample = text.slice(0, 4096);
  let nuls = 0;
  for (let i = 0; i < sample.length; i++) if (sample.charCodeAt(i) === 0) nuls++;
  return nuls * 3 >= sample.length ? text.replaceAll('\u0000', '') : text;
}

const GH_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z /;
const FRAMING = [
  '[command]',
  '::debug::',
  '::set-output ',
  '::group::',
  '::endgroup::',
  '::add-mask::',
  '::notice',
  '::warning',
  '::error',
];

/**
 * The wrapper's and the runner's framing lines blanked (not removed: text plan lines keep their
 * numbers, which annotations cite); GitHub's timestamps are left to the text parser. Answers the
 * text unchanged when it has no framing line.
 */
export function blankFraming(text: string): string {
  if (!text.includes('[command]') && !text.includes('::')) return text;
  const lines = text.split('\n');
  let changed = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const body = GH_TIMESTAMP.test(line) ? line.slice(line.indexOf('Z ') + 2) : line;
    if (FRAMING.some((f) => body.startsWith(f))) {
      lines[i] = '';
      changed = true;
    }
  }
  return changed ? lines.join('\n') : text;
}

/** The output the wrapper logged in `::debug::stdout: …` or `::set-output name=stdout::…`, unescaped (null when none). */
export function wrappedStdout(text: string): string | null {
  for (const marker of ['::set-output name=stdout::', '::debug::stdout: ']) {
    const at = text.indexOf(marker);
    if (at < 0) continue;
    const end = text.indexOf('\n', at);
    const data = text.slice(at + marker.length, end < 0 ? text.length : end).replace(/\r$/, '');
    if (!data.trim()) continue;
    return data.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%');
  }
  return null;
}

/**
 * Where a JSON document in `text` starts and ends: from the first `{` that starts a line (after a
 * GitHub timestamp; anywhere in the first line's leading spaces) to its matching brace, strings
 * skipped: one scan, nesting capped at PLAN_LIMITS.depth (a 400 naming the cap, before JSON.parse
 * builds anything). Null when no line starts with `{` or its braces do not close.
 */
export function jsonExtent(text: string): { start: number; end: number } | null {
  let start = -1;
  for (let at = 0; at < text.length;) {
    let k = at;
    const stamp = GH_TIMESTAMP.exec(text.slice(at, at + 40));
    if (stamp) k += stamp[0].length;
    if (at === 0) while (k < text.length && /\s/.test(text[k]!)) k++;
    if (text.charCodeAt(k) === 123) {
      start = k;
      break;
    }
    const nl = text.indexOf('\n', at);
    if (nl < 0) break;
    at = nl + 1;
  }
  if (start < 0) return null;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > PLAN_LIMITS.depth) throw tooDeep(`JSON, at character ${i + 1}`);
    } else if (c === 125 || c === 93) {
      if (--depth === 0) return { start, end: i + 1 };
    }
  }
  return null;
}
