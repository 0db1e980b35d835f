import { randomBytes } from 'node:crypto';
import { createApiRuntime, startApi, type RunningApi } from '@opsi/api';
import { loadConfig, type Config } from '@opsi/config';
import { createTenant, createUser, mintToken, type Auth } from '@opsi/core';
import type { Tier, Role, TokenScope } from '@opsi/db';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { createLogger, type Logger } from '@opsi/logger';
import { createRedis, deleteKeys, type RedisClient } from '@opsi/redis';

/** Real Redis for tests: REDIS_URL, or this machine's local Redis. */
export function testRedisUrl(): string {
  return loadConfig(process.env).REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/**
 * Whether the tests' Redis is a cluster (REDIS_CLUSTER=true with REDIS_URL at a seed node, as
 * `npm run test:redis-cluster` runs them).
 */
export function testRedisCluster(): boolean {
  return loadConfig(process.env).REDIS_CLUSTER;
}

export interface TestContext {
  db: TestDatabase['db'];
  database: TestDatabase;
  redis: RedisClient;
  redisPrefix: string;
  config: Config;
  close(): Promise<void>;
}

/** Deletes every key matching a pattern (a test's prefix), on every master of a cluster. */
export async function deleteRedisKeys(redis: RedisClient, pattern: string): Promise<void> {
  await deleteKeys(redis, pattern);
}

/**
 * One per test file: a database cloned from the migrated template and a Redis key prefix of its own,
 * so files run in parallel without seeing each other's data.
 */
export async function createTestContext(env: Record<string, string> = {}): Promise<TestContext> {
  const database = await createTestDatabase();
  const redisPrefix = `opsi_t_${randomBytes(5).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PORT: '0',
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl(),
    REDIS_CLUSTER: String(testRedisCluster()),
    REDIS_PREFIX: redisPrefix,
    ...env,
  });
  const redis = createRedis(config.REDIS_URL!, 'command', config.REDIS_CLUSTER);
  return {
    db: database.db,
    database,
    redis,
    redisPrefix,
    config,
    async close() {
      await deleteRedisKeys(redis, `${redisPrefix}*`);
      redis.disconnect();
      await database.close();
    },
  };
}

/** The API on an ephemeral port against the context's database and Redis. */
export async function startTestApi(
  t: TestContext,
  config: Partial<Config> = {},
  logger: Logger = createLogger(t.config),
): Promise<RunningApi> {
  const merged = { ...t.config, ...config };
  const runtime = createApiRuntime(merged, testRedisUrl(), logger);
  await runtime.connected(); // as apps/api/src/main.ts does before it listens
  const api = await startApi({
    config: merged,
    logger,
    db: t.db,
    redis: runtime.redis,
    runs: runtime.runs,
    revision: 'test-revision',
  });
  return {
    ...api,
    async close(graceMs?: number) {
      await api.close(graceMs);
      await runtime.close();
    },
  };
}

export interface TestMember {
  tenant: { id: string; slug: string; name: string; tier: Tier };
  user: { id: string; email: string; name: string; role: Role };
  password: string;
}

/** A tenant with one user (an owner unless told otherwise). */
export async function createTenantWithUser(
  t: Pick<TestContext, 'db'>,
  opts: { slug?: string; tier?: Tier; role?: Role; budget?: number } = {},
): Promise<TestMember> {
  const slug = opts.slug ?? `t-${randomBytes(4).toString('hex')}`;
  const tenant = await createTenant(t.db, {
    slug,
    name: `Tenant ${slug}`,
    tier: opts.tier ?? 'team',
    ...(opts.budget !== undefined ? { dailyAgentBudget: opts.budget } : {}),
  });
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const user = await createUser(t.db, {
    tenantSlug: slug,
    email: `${slug}-${randomBytes(3).toString('hex')}@example.com`,
    password,
    role: opts.role ?? 'owner',
  });
  return {
    tenant: { id: tenant.id, slug: tenant.slug, name: tenant.name, tier: tenant.tier },
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
    password,
  };
}

/** A second user in an existing tenant. */
export async function addUser(
  t: Pick<TestContext, 'db'>,
  member: TestMember,
  role: Role = 'member',
): Promise<TestMember> {
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const user = await createUser(t.db, {
    tenantSlug: member.tenant.slug,
    email: `${member.tenant.slug}-${randomBytes(3).toString('hex')}@example.com`,
    password,
    role,
  });
  return {
    tenant: member.tenant,
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
    password,
  };
}

/**
 * Mints a token directly through the service (as a browser session would), for tests that are not
 * about minting. Answers the secret and the token id.
 */
export async function mintTestToken(
  t: Pick<TestContext, 'db'>,
  member: TestMember,
  scope: TokenScope = 'read_write',
  opts: { name?: string; expiresInDays?: number } = {},
): Promise<{ token: string; id: string }> {
  const auth: Auth = {
    kind: 'session',
    tenant: { ...member.tenant, timezone: 'UTC', daily_agent_budget: 200 },
    user: member.user,
    session: { id: 'test', csrf_token: 'test', expires_at: new Date(Date.now() + 3_600_000) },
  };
  const minted = await mintToken(t.db, auth, {
    name: opts.name ?? `test-${scope}`,
    scope,
    expiresInDays: opts.expiresInDays,
  });
  return { token: minted.token, id: minted.id };
}

export interface BrowserLogin {
  cookie: string;
  csrf: string;
}

/** Signs in over HTTP like a browser; answers the session cookie and CSRF token. */
export async function loginOverHttp(baseUrl: string, email: string, password: string): Promise<BrowserLogin> {
  const res = await fetch(`${baseUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = /opsi_session=[^;]+/.exec(setCookie)?.[0];
  if (!cookie) throw new Error(`no session cookie in ${setCookie}`);
  const body = (await res.json()) as { csrf_token: string };
  return { cookie, csrf: body.csrf_token };
}

/** fetch with a bearer token and JSON body; answers status, headers and the parsed body. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, body: json as Record<string, any>, text };
}

export * from './sse';
export * from './processes';
export * from './poll';
export * from './realworld';

/** Starts the worker in-process against the context (the scripted engine unless told otherwise). */
export async function startTestWorker(
  t: TestContext,
  config: Partial<Config> = {},
  logger: Logger = createLogger(t.config),
) {
  const { startWorker } = await import('@opsi/worker');
  return startWorker({
    config: { ...t.config, AGENT_ENGINE: 'scripted', ...config },
    logger,
    db: t.db,
    redisUrl: testRedisUrl(),
    metricsPort: 0,
  });
}

/** A `script:` prompt for the scripted engine. */
export function script(steps: unknown[]): string {
  return `script:${JSON.stringify(steps)}`;
}
export * from './cli';
export * from './realworld';
