import type { RunningApi } from '@opsi/api';
import type { Config } from '@opsi/config';
import type { Tier } from '@opsi/db';
import { test } from 'vitest';
import {
  createTenantWithUser,
  createTestContext,
  loginOverHttp,
  mintTestToken,
  startTestApi,
  startTestWorker,
  type BrowserLogin,
  type TestContext,
  type TestMember,
} from './index';

type TestWorker = Awaited<ReturnType<typeof startTestWorker>>;

/** How a file's first tenant is made (the second is always a plain team tenant). */
export interface TenantOptions {
  tier?: Tier;
  budget?: number;
}

/**
 * What every API integration file had in its beforeAll/afterAll, as file-scoped fixtures: set up
 * once per file the first time a test or a `beforeAll` of the file asks for them, torn down after
 * its last test in the reverse order (worker, API, database and Redis keys).
 */
export interface ApiFixtures {
  /** Environment for the file's test context (`createTestContext`). Override per file. */
  contextEnv: Record<string, string>;
  /** Config over the context's for the API (`startTestApi`). Override per file. */
  apiConfig: Partial<Config>;
  /** A worker in-process with this config over the context's, or none (null, the default). */
  workerConfig: Partial<Config> | null;
  /** How tenant A is made. Override per file. */
  aOptions: TenantOptions;
  /** The file's database clone, Redis and config. */
  t: TestContext;
  /** The API on an ephemeral port against `t`. */
  api: RunningApi;
  /** The API's base URL. */
  url: string;
  /** The worker `workerConfig` asked for (started with the file), else undefined. */
  worker: TestWorker | undefined;
  /** Tenant A with its owner. */
  a: TestMember;
  /** Tenant B with its owner, for isolation checks. */
  b: TestMember;
  /** A free-tier tenant with its owner, for tier checks. */
  free: TestMember;
  aRead: string;
  aWrite: string;
  bRead: string;
  bWrite: string;
  freeRead: string;
  freeWrite: string;
  /** Tenant A's owner signed in over HTTP (session cookie and CSRF token). */
  aLogin: BrowserLogin;
}

/** `it` for API integration files: the running API, its database and tenants as fixtures. */
export const apiTest = test
  .extend('contextEnv', { scope: 'file' }, {} as ApiFixtures['contextEnv'])
  .extend('apiConfig', { scope: 'file' }, {} as ApiFixtures['apiConfig'])
  .extend('workerConfig', { scope: 'file' }, null as ApiFixtures['workerConfig'])
  .extend('aOptions', { scope: 'file' }, {} as ApiFixtures['aOptions'])
  .extend('t', { scope: 'file' }, async ({ contextEnv }, { onCleanup }) => {
    const t = await createTestContext(contextEnv);
    onCleanup(() => t.close());
    return t;
  })
  .extend('api', { scope: 'file' }, async ({ t, apiConfig }, { onCleanup }) => {
    const api = await startTestApi(t, apiConfig);
    onCleanup(() => api.close());
    return api;
  })
  .extend('url', { scope: 'file' }, async ({ api }) => api.url)
  // Auto: a file that asks for a worker has it running whether or not a test names it; it asks for
  // the API too, so every file has its API from the start and the worker stops before it.
  .extend(
    'worker',
    { scope: 'file', auto: true },
    async ({ t, api, workerConfig }, { onCleanup }): Promise<TestWorker | undefined> => {
      void api;
      if (!workerConfig) return undefined;
      const worker = await startTestWorker(t, workerConfig);
      onCleanup(() => worker.close());
      return worker;
    },
  )
  .extend('a', { scope: 'file' }, async ({ t, aOptions }) => createTenantWithUser(t, aOptions))
  .extend('b', { scope: 'file' }, async ({ t }) => createTenantWithUser(t))
  .extend('free', { scope: 'file' }, async ({ t }) => createTenantWithUser(t, { tier: 'free' }))
  .extend('aRead', { scope: 'file' }, async ({ t, a }) => (await mintTestToken(t, a, 'read')).token)
  .extend('aWrite', { scope: 'file' }, async ({ t, a }) => (await mintTestToken(t, a, 'read_write')).token)
  .extend('bRead', { scope: 'file' }, async ({ t, b }) => (await mintTestToken(t, b, 'read')).token)
  .extend('bWrite', { scope: 'file' }, async ({ t, b }) => (await mintTestToken(t, b, 'read_write')).token)
  .extend('freeRead', { scope: 'file' }, async ({ t, free }) => (await mintTestToken(t, free, 'read')).token)
  .extend(
    'freeWrite',
    { scope: 'file' },
    async ({ t, free }) => (await mintTestToken(t, free, 'read_write')).token,
  )
  .extend('aLogin', { scope: 'file' }, async ({ url, a }) => loginOverHttp(url, a.user.email, a.password));
