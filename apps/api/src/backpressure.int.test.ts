import { afterAll, describe, expect } from 'vitest';
import { JobProducer } from '@opsi/jobs';
import { createLogger } from '@opsi/logger';
import { AgentBudget } from '@opsi/core';
import { createRedis, startEmbeddedRedis } from '@opsi/redis';
import { createTenantWithUser, mintTestToken, testRedisUrl } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';
import { fillUp, startDrillRedis, type DrillRedis } from '../../../test/support/drills';
import { createApiRuntime } from './runtime';
import { startApi, type RunningApi } from './server';

// Backpressure protects the service, it is not a quota: a tenant whose backlog is full, or a Redis that
// refuses writes at maxmemory, answers 503 {detail} with Retry-After before anything is written or spent.
// No worker runs here, so every admitted turn stays queued.

const it = apiTest
  .override({ apiConfig: { QUEUE_TENANT_BACKLOG_MAX: 2, TRIAGE_WAIT_MS: 50 } })
  .extend('runs', async ({ t }) => async (tenantId: string) => {
    const row = await t.db
      .selectFrom('agent_runs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  });

/** Opens /api/v1/stream and hangs up once the answer's head is in (an admitted run goes on). */
async function stream(base: string, token: string) {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/v1/stream?prompt=hello`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const body = res.status === 200 ? undefined : ((await res.json()) as { detail?: string });
  controller.abort();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}

describe('a tenant whose agent backlog is full', () => {
  it('gets 503 {detail} with Retry-After on /stream and /ask; nothing is written or spent; other tenants go on', async ({
    t,
    api,
    runs,
  }) => {
    const a = await createTenantWithUser(t, { budget: 3 });
    const b = await createTenantWithUser(t, { budget: 3 });
    const tokenA = (await mintTestToken(t, a, 'read_write')).token;
    const tokenB = (await mintTestToken(t, b, 'read_write')).token;
    expect((await stream(api.url, tokenA)).status).toBe(200);
    expect((await stream(api.url, tokenA)).status).toBe(200);

    const refused = await stream(api.url, tokenA);
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('10');
    expect(refused.body?.detail).toMatch(/waiting \(2 jobs in the agent queue\); retry shortly/);
    const ask = await fetch(`${api.url}/api/v1/ask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'hello' }),
    });
    expect(ask.status).toBe(503);
    expect(ask.headers.get('retry-after')).toBe('10');
    expect(((await ask.json()) as { detail: string }).detail).toMatch(/retry shortly/);
    expect(await runs(a.tenant.id)).toBe(2);

    // The refusals spent no budget (3 a day): the one unit left is still there once the backlog drains.
    const connection = createRedis(testRedisUrl(), 'producer');
    const producer = new JobProducer(connection, t.redisPrefix);
    try {
      for (const job of await producer.queue('agent').getJobs(['prioritized', 'waiting'])) await job.remove();
    } finally {
      await producer.close();
      connection.disconnect();
    }
    expect((await stream(api.url, tokenA)).status).toBe(200);
    const spent = await stream(api.url, tokenA);
    expect(spent.status).toBe(429);

    // Tenant B was never affected.
    expect((await stream(api.url, tokenB)).status).toBe(200);
    expect(await runs(b.tenant.id)).toBe(1);
  });
});

describe('a tenant whose triage backlog is full', () => {
  it('gets 503 {detail} with Retry-After on POST /api/v1/triage/alerts; nothing is stored; other tenants go on', async ({
    t,
    api,
  }) => {
    const a = await createTenantWithUser(t);
    const b = await createTenantWithUser(t);
    const tokenA = (await mintTestToken(t, a, 'read_write')).token;
    const tokenB = (await mintTestToken(t, b, 'read_write')).token;
    const post = (token: string, i: number) =>
      fetch(`${api.url}/api/v1/triage/alerts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          title: `alert ${i}`,
          severity: 'high',
          source: 'test',
          fingerprint: `fp-${i}`,
        }),
      });
    const inbox = async (tenantId: string) =>
      (await t.db.selectFrom('triage_inbox').select('id').where('tenant_id', '=', tenantId).execute()).length;
    // One at a time, so each is its own batch (and job): no worker takes them.
    expect((await post(tokenA, 1)).status).toBe(202);
    expect((await post(tokenA, 2)).status).toBe(202);
    const refused = await post(tokenA, 3);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/2 jobs in the triage queue/);
    expect(await inbox(a.tenant.id)).toBe(2);
    expect((await post(tokenB, 1)).status).toBe(202);
    expect(await inbox(b.tenant.id)).toBe(1);
  });
});

describe('Redis refusing writes at maxmemory (noeviction)', () => {
  let redis: DrillRedis;
  let broken: RunningApi;
  let close: () => Promise<void>;
  it.beforeAll(async ({ t }) => {
    redis = await startDrillRedis();
    const runtime = createApiRuntime(t.config, redis.url, createLogger(t.config));
    broken = await startApi({
      config: t.config,
      logger: createLogger(t.config),
      db: t.db,
      redis: runtime.redis,
      runs: runtime.runs,
      revision: 'x',
    });
    close = async () => {
      await broken.close();
      await runtime.close();
    };
  });
  afterAll(async () => {
    await close?.();
    await redis?.destroy();
  });

  it('answers 503 {detail} with Retry-After, never a 500; nothing is written; it works again once memory is back', async ({
    t,
    runs,
  }) => {
    const member = await createTenantWithUser(t, { budget: 5 });
    const token = (await mintTestToken(t, member, 'read_write')).token;
    const admin = createRedis(redis.url, 'command');
    try {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
      await admin.config('SET', 'maxmemory', String(used + 256 * 1024));
      await fillUp(admin);

      const refused = await stream(broken.url, token);
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe('10');
      expect(refused.body?.detail).toBe('The job queue is out of memory; retry shortly.');
      expect(await runs(member.tenant.id)).toBe(0);

      await admin.del(...(await admin.keys('filler:*')));
      await admin.config('SET', 'maxmemory', '0');
      expect((await stream(broken.url, token)).status).toBe(200);
      expect(await runs(member.tenant.id)).toBe(1);
    } finally {
      admin.disconnect();
    }
  });
});

describe('the budget refund of a refused request', () => {
  it('gives the unit back even when Redis refuses writes at maxmemory (a 503 at the edge spends nothing)', async () => {
    const redis = await startDrillRedis();
    const admin = createRedis(redis.url, 'command');
    try {
      const budget = new AgentBudget(admin, 'p');
      expect(await budget.spend('tok', 5)).toMatchObject({ ok: true, used: 1 });
      // Well past maxmemory (noeviction): every write that may grow memory is refused.
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
      // Redis refuses writes now: a plain DECR (the refund as it was) is refused; the refund still lands.
      await expect(admin.decr('p:budget:tok:' + new Date().toISOString().slice(0, 10))).rejects.toThrow(
        /OOM/,
      );
      await budget.refund('tok');
      expect(await budget.used('tok')).toBe(0);
    } finally {
      admin.disconnect();
      await redis.destroy();
    }
  });

  it('works on a server without script flags (the embedded Redis of npm start)', async () => {
    const embedded = await startEmbeddedRedis();
    const client = createRedis(embedded.url, 'command');
    try {
      const budget = new AgentBudget(client, 'p');
      await budget.spend('tok', 5);
      await budget.spend('tok', 5);
      await budget.refund('tok');
      await budget.refund('tok');
      expect(await budget.used('tok')).toBe(0);
    } finally {
      client.disconnect();
      await embedded.close();
    }
  });
});
