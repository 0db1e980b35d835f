import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from './processes';

/** `../shared/realworld` from the repository root: real inputs, read in place, never copied in. */
export const REALWORLD_DIR = resolve(REPO_ROOT, '../shared/realworld');

/** The files of one corpus folder (sorted), or null when `../shared/realworld` is absent. */
export function realworldFiles(folder: string): string[] | null {
  const dir = join(REALWORLD_DIR, folder);
  if (!existsSync(dir)) return null;
  return readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
}

/** Why a corpus test is skipped. */
export const REALWORLD_ABSENT = `skipped: ../shared/realworld is absent (${REALWORLD_DIR})`;
