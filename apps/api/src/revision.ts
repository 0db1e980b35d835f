import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** REVISION when set, else the git commit of the checkout, else the package version. */
export function resolveRevision(configured: string | undefined): string {
  if (configured) return configured;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    return pkg.version;
  }
}
