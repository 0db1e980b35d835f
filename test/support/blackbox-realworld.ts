// The black-box checks' own view of the corpus (test/e2e/blackbox-wave3-*), written from the contract
// without reading the implementation's helpers (realworld.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from './processes';

// The real-world corpus (inputs written by other public projects; provenance in its SOURCES.md) is read
// from `../shared/realworld`, beside the repository, and never copied into the project. Tests that need
// it are skipped, with a message naming that folder, when it is absent.

/** `../shared/realworld`, resolved from the repository root. */
export const REALWORLD_DIR = resolve(REPO_ROOT, '../shared/realworld');

/** Whether the corpus (or one of its folders) is present. */
export function hasRealworld(sub = ''): boolean {
  return existsSync(join(REALWORLD_DIR, sub));
}

/** The message a skipped test carries when the corpus is absent. */
export const REALWORLD_SKIP = 'skipped: the real-world corpus ../shared/realworld is absent';

/** The files of one corpus folder, sorted by name. */
export function realworldFiles(sub: string): string[] {
  return readdirSync(join(REALWORLD_DIR, sub))
    .filter((f) => !f.startsWith('.'))
    .sort();
}

export function realworldPath(sub: string, file: string): string {
  return join(REALWORLD_DIR, sub, file);
}

export function readRealworld(sub: string, file: string): Buffer {
  return readFileSync(join(REALWORLD_DIR, sub, file));
}
