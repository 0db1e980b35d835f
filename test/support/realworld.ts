import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './processes';

/** Where the real-world inputs live: `../shared/realworld` from the repository root (never copied in). */
export const REALWORLD_DIR = join(REPO_ROOT, '..', 'shared', 'realworld');

/** Why a corpus test is skipped. */
export const REALWORLD_ABSENT = `skipped: ../shared/realworld is absent (${REALWORLD_DIR})`;

/**
 * The files of one folder of `../shared/realworld` (name and text), sorted; an empty list when the
 * folder is absent, with `missing` saying so for a `describe.skipIf` and its message.
 */
export function realworldFiles(folder: string): {
  files: Array<{ name: string; text: string }>;
  missing: string | undefined;
} {
  const dir = join(REALWORLD_DIR, folder);
  if (!existsSync(dir))
    return {
      files: [],
      missing: `skipped: ../shared/realworld/${folder} is absent (${dir}); the real-world payloads are read from there`,
    };
  return {
    files: readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort()
      .map((name) => ({ name, text: readFileSync(join(dir, name), 'utf8') })),
    missing: undefined,
  };
}

/** The paths of every file of one corpus folder (sorted), or null when `../shared/realworld` is absent. */
export function realworldPaths(folder: string): string[] | null {
  const dir = join(REALWORLD_DIR, folder);
  if (!existsSync(dir)) return null;
  return readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
}

/**
 * A copy-paste snippet of a doc: the fenced block after `<!-- snippet: NAME -->` (the tests run the
 * configurations the docs give users, not their own).
 */
export function docSnippet(doc: string, name: string): string {
  const text = readFileSync(join(REPO_ROOT, doc), 'utf8');
  const at = text.indexOf(`<!-- snippet: ${name} -->`);
  if (at < 0) throw new Error(`${doc} has no snippet ${name}`);
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(text.slice(at));
  if (!block) throw new Error(`${doc}: snippet ${name} has no fenced block`);
  return block[1]!;
}
