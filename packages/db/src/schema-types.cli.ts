// `npm run db:types`: writes packages/db/src/schema.gen.ts from the migrated schema with kysely-codegen
// (the column types the database cannot say come from .kysely-codegenrc.json's overrides, named in
// column-types.ts). `npm run db:types -- --verify` answers non-zero when the checked-in file is stale;
// packages/db/src/schema.int.test.ts runs that in CI.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from './testing';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const verify = process.argv.includes('--verify');
const database = await createTestDatabase();
const { status } = await runCodegen(database.url, verify).finally(() => database.close());
process.exit(status);

async function runCodegen(url: string, check: boolean) {
  const result = spawnSync(
    process.execPath,
    [
      `${root}node_modules/kysely-codegen/dist/cli/bin.js`,
      '--config-file',
      `${root}packages/db/.kysely-codegenrc.json`,
      '--url',
      url,
      '--log-level',
      'warn',
      ...(check ? ['--verify'] : []),
    ],
    { cwd: root, stdio: 'inherit' },
  );
  return { status: result.status ?? 1 };
}
