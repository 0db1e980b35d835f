// The floors of bench/floor (the contract's paths written at their minimum, which bench:runs and
// bench:triage measure ours against) run and answer what the contract answers: two stream turns and two
// triage alerts against real Postgres and Redis, their answers and rows checked.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, createTenantWithUser, mintTestToken, type TestContext } from '@opsi/test-support';
import type { Redis } from 'ioredis';
import { startStreamFloor, startTriageFloor, type Floor } from '../../bench/floor/start';
import { readSse } from '../../bench/runs/lib/sse-client';
import { stopInProcess, type Scratch } from '../../bench/runs/lib/env';

function post(url: string, token: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': String(payload.length),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('bench/floor', () => {
  let t: TestContext;
  let scratch: Scratch;
  let token: string;
  let member: Awaited<ReturnType<typeof createTenantWithUser>>;
  const floors: Floor[] = [];

  beforeAll(async () => {
    t = await createTestContext();
    scratch = {
      db: t.db,
      databaseUrl: t.database.url,
      redisUrl: t.config.REDIS_URL!,
      redis: t.redis as Redis, // the floors run on a single Redis (this file is not in the cluster pass)
      redisPrefix: t.redisPrefix,
      close: async () => undefined,
    };
    member = await createTenantWithUser(t, { budget: 10 });
    token = (await mintTestToken(t, member, 'read_write')).token;
  });

  afterAll(async () => {
    await Promise.allSettled(floors.map((f) => f.stop()));
    stopInProcess();
    await t?.close();
  });

  it('streams two turns: four events each, numbered, and the run rows completed', async () => {
    const floor = await startStreamFloor(scratch, {
      tenantId: member.tenant.id,
      userId: member.user.id,
      concurrency: 2,
    });
    floors.push(floor);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const prompt of ['hi 1', 'hi 2']) {
        const r = await readSse(`${floor.url}/api/v1/stream?prompt=${encodeURIComponent(prompt)}`, {
          token,
          agent,
        });
        expect(r.status).toBe(200);
        expect(r.events).toBe(4);
        expect(r.complete).toBe(true);
        expect(r.tail).toContain(`"kind":"run.completed"`);
        expect(r.tail).toContain(`"reply":"echo: ${prompt}"`);
        expect(r.tail).toMatch(/id: 4\nevent: run\.completed\n/);
      }
    } finally {
      agent.destroy();
    }
    // The stream ends at run.completed; the worker finishes the row right after (as ours does).
    const readRuns = () =>
      t.db
        .selectFrom('agent_runs')
        .select(['status', 'reply', 'last_seq', 'attempts'])
        .where('tenant_id', '=', member.tenant.id)
        .orderBy('created_at')
        .execute();
    let runs = await readRuns();
    for (let i = 0; i < 100 && runs.some((r) => r.status !== 'completed'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      runs = await readRuns();
    }
    expect(runs).toEqual([
      { status: 'completed', reply: 'echo: hi 1', last_seq: 4, attempts: 1 },
      { status: 'completed', reply: 'echo: hi 2', last_seq: 4, attempts: 1 },
    ]);
    // A wrong token is refused before anything is written.
    const refused = await readSse(`${floor.url}/api/v1/stream?prompt=x`, { token: `${token}x` });
    expect(refused.status).toBe(401);
  });

  it('decides two alerts of one fingerprint: a new event, then a duplicate counted on it', async () => {
    const floor = await startTriageFloor(scratch, { concurrency: 2, pool: 2 });
    floors.push(floor);
    const alert = { title: 'disk full', fingerprint: 'floor-fp', source: 'bench', severity: 'high' };
    const first = await post(`${floor.url}/api/v1/triage/alerts`, token, alert);
    const second = await post(`${floor.url}/api/v1/triage/alerts`, token, alert);
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    const a = first.json as { pending: boolean; events: Array<{ id: number; action: string }> };
    const b = second.json as { pending: boolean; events: Array<{ id: number; action: string }> };
    expect(a.pending).toBe(false);
    expect(a.events).toEqual([{ id: expect.any(Number), action: 'new', incident_id: null }]);
    expect(b.events).toEqual([{ id: a.events[0]!.id, action: 'deduplicated', incident_id: null }]);
    const events = await t.db
      .selectFrom('triage_events')
      .select(['fingerprint', 'count', 'action'])
      .where('tenant_id', '=', member.tenant.id)
      .execute();
    expect(events).toEqual([{ fingerprint: 'floor-fp', count: 2, action: 'new' }]);
    const inbox = await t.db
      .selectFrom('triage_inbox')
      .select(['action', 'processed_at'])
      .where('tenant_id', '=', member.tenant.id)
      .orderBy('id')
      .execute();
    expect(inbox.map((r) => [r.action, r.processed_at !== null])).toEqual([
      ['new', true],
      ['deduplicated', true],
    ]);
  });

  it('with FLOOR_COALESCE=1, concurrent alerts go in fewer batches and each gets its own decision', async () => {
    const floor = await startTriageFloor(scratch, { concurrency: 2, pool: 2, coalesce: true });
    floors.push(floor);
    const alert = (fp: string) => ({ title: fp, fingerprint: fp, source: 'bench', severity: 'low' });
    const url = `${floor.url}/api/v1/triage/alerts`;
    // 20 at once (at most 2 batches in flight: the rest wait and go together), then a repeat.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(url, token, alert(`gc-${i}`))),
    );
    const again = await post(url, token, alert('gc-7'));
    const all = [...answers, again].map(
      (r) => r.json as { batch_id: string; events: Array<{ id: number; action: string }> },
    );
    expect(all.slice(0, 20).every((r) => r.events.length === 1 && r.events[0]!.action === 'new')).toBe(true);
    expect(all[20]!.events).toEqual([
      { id: all[7]!.events[0]!.id, action: 'deduplicated', incident_id: null },
    ]);
    expect(new Set(all.slice(0, 20).map((r) => r.batch_id)).size).toBeLessThan(20);
    const events = await t.db
      .selectFrom('triage_events')
      .select(['fingerprint', 'count'])
      .where('tenant_id', '=', member.tenant.id)
      .where('fingerprint', 'like', 'gc-%')
      .execute();
    expect(events).toHaveLength(20);
    expect(events.find((e) => e.fingerprint === 'gc-7')!.count).toBe(2);
  });
});
