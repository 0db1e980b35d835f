import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('schema.gen.ts', () => {
  it('is what kysely-codegen writes from the migrated schema (run `npm run db:types` after a migration)', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'packages/db/src/schema-types.cli.ts', '--verify'],
      {
        cwd: root,
        encoding: 'utf8',
        env: process.env,
      },
    );
    const diff = `${r.stdout}\n${r.stderr}`
      .split('\n')
      .filter((l) => !/^\s+at /.test(l))
      .join('\n')
      .slice(0, 4000);
    expect(r.status, `schema.gen.ts is stale; run npm run db:types:\n${diff}`).toBe(0);
  }, 120_000);
});
