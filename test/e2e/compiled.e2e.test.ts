import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createTenantWithUser, loginOverHttp } from '../support/index';
import { childEnv, REPO_ROOT, startService, type ServiceProcess } from '../support/processes';

// Production runs compiled JavaScript (`npm run build`, scripts/build.mjs), not tsx: each process's
// bundle must start as plain node, find everything it serves, and the npm scripts must pick it with
// NODE_ENV=production. The other end-to-end tests run the sources through tsx, so this is the one
// place the build itself is checked.

const run = promisify(execFile);
const REDIS_URL = 'redis://127.0.0.1:6379';
/** Production refuses to start without a key for notifier secrets. */
const SECRETS_KEY = 'k'.repeat(40);

/** `node scripts/run.mjs <entry> …args`, as `npm run <script>` runs it, with NODE_ENV=production. */
function runScript(entry: string, args: string[], env: Record<string, string>) {
  return run(process.execPath, ['scripts/run.mjs', entry, ...args], {
    cwd: REPO_ROOT,
    env: childEnv({ ...env, NODE_ENV: 'production', LOG_LEVEL: 'warn', SECRETS_KEY }),
    timeout: 120_000,
  });
}

/** GETs the login page and the assets it links to, as a browser would. */
async function expectPages(base: string) {
  const login = await fetch(`${base}/login`);
  expect(login.status).toBe(200);
  const html = await login.text();
  expect(html).toContain('<form');
  const assets = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  expect(assets.length).toBeGreaterThan(0);
  for (const path of assets) {
    const res = await fetch(`${base}${path}`);
    expect(res.status, path).toBe(200);
    expect((await res.text()).length, path).toBeGreaterThan(100);
  }
}

describe('compiled JavaScript', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  const redisPrefix = `opsi_e2e_build_${randomBytes(5).toString('hex')}`;
  const processes: ServiceProcess[] = [];
  let dataDir = '';
  let env: Record<string, string>;

  beforeAll(async () => {
    await run(process.execPath, ['scripts/build.mjs'], { cwd: REPO_ROOT, timeout: 120_000 });
    database = await createTestDatabase();
    env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      DATABASE_POOL_MAX: '3',
      // Production with a database server needs the key of notifier secrets.
      SECRETS_KEY: randomBytes(32).toString('base64'),
    };
    dataDir = await mkdtemp(join(tmpdir(), 'opsi-e2e-build-'));
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the API bundle starts as plain node in production and serves its pages and assets', async () => {
    const api = await startService(
      { ...env, NODE_ENV: 'production', AGENT_ENGINE: 'builtin', SECRETS_KEY },
      { entry: 'apps/api/dist/main.js' },
    );
    processes.push(api);
    const ready = await fetch(`${api.url}/readyz`);
    expect(ready.status).toBe(200);
    await expectPages(api.url);
    // The API reference's assets come from node_modules (swagger-ui-dist), resolved from the bundle.
    const docs = await fetch(`${api.url}/docs`);
    expect(docs.status).toBe(200);
    const docAssets = [...(await docs.text()).matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)];
    expect(docAssets.length).toBeGreaterThan(0);
    for (const [, path] of docAssets) expect((await fetch(`${api.url}${path}`)).status, path).toBe(200);
    // The console: the page names the files `npm run build` wrote under apps/api/dist/console, and the
    // bundle serves exactly those (no bundling at run time in production).
    const member = await createTenantWithUser({ db: database.db });
    const { cookie } = await loginOverHttp(api.url, member.user.email, member.password);
    const page = await fetch(`${api.url}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const files = [...(await page.text()).matchAll(/(?:href|src)="\/assets\/console\/([^"]+)"/g)].map(
      (m) => m[1]!,
    );
    expect(files.length).toBe(2);
    for (const file of files) {
      const res = await fetch(`${api.url}/assets/console/${file}`);
      expect(res.status, file).toBe(200);
      expect(
        Buffer.from(await res.arrayBuffer()).equals(
          await readFile(join(REPO_ROOT, 'apps/api/dist/console', file)),
        ),
        file,
      ).toBe(true);
    }
  });

  it('npm start in production (embedded) runs the standalone bundle', async () => {
    const standalone = await startService(
      { DATA_DIR: dataDir, NODE_ENV: 'production', AGENT_ENGINE: 'builtin', SECRETS_KEY },
      { entry: 'apps/standalone/dist/main.js', readyTimeoutMs: 180_000 },
    );
    processes.push(standalone);
    await expectPages(standalone.url);
    const version = await fetch(`${standalone.url}/api/v1/version`);
    expect(version.status).toBe(200);
    await standalone.stop();
  });

  it('with NODE_ENV=production, npm run db:migrate and npm run admin run the bundles', async () => {
    const migrate = await runScript('packages/db/src/migrate.cli.ts', [], env);
    expect(migrate.stdout + migrate.stderr).toMatch(/up to date|applied/);
    const created = await runScript('apps/admin/src/main.ts', ['tenant', 'create', 'built', '--json'], env);
    expect(JSON.parse(created.stdout)).toMatchObject({ tenant: { slug: 'built' } });
    // A failure is still one {detail} with exit code 1.
    const failed = await runScript(
      'apps/admin/src/main.ts',
      ['tenant', 'create', 'built', '--json'],
      env,
    ).catch((e: { code: number; stdout: string }) => e);
    expect(failed).toMatchObject({ code: 1 });
    expect(Object.keys(JSON.parse(failed.stdout))).toEqual(['detail']);
  });
});
