import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import { call, createTenantWithUser, mintTestToken } from '../support/index';
import { type ServiceProcess } from '../support/processes';
import { startSplitServices, type SplitServices } from '../support/split';
import { until as pollUntil } from '../support/poll';

// A triage worker SIGKILLed in the middle of a coalesced batch: the batch is taken over by another worker
// and every alert is decided exactly once (no alert lost, none counted twice), with real processes.

let svc: SplitServices;
let token = '';
let tenantId = '';

const startWorker = (): Promise<ServiceProcess> =>
  svc.startWorker({
    WORKER_QUEUES: 'triage',
    WORKER_LOCK_DURATION_MS: '2000',
    WORKER_STALLED_INTERVAL_MS: '1000',
  });

const until = <T>(what: string, probe: () => Promise<T | undefined>, boundMs = 120_000) =>
  pollUntil(what, probe, boundMs, 25);

const processed = async () =>
  (
    await svc.t.db
      .selectFrom('triage_inbox')
      .select(sql<number>`count(*) filter (where processed_at is not null)::int`.as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow()
  ).n;

beforeAll(async () => {
  // No worker yet: the test starts (and kills) its own. Answer pending quickly: the test follows the
  // batch in the database.
  svc = await startSplitServices({ worker: false, env: { TRIAGE_WAIT_MS: '200' } });
  const member = await createTenantWithUser(svc.t);
  tenantId = member.tenant.id;
  token = (await mintTestToken(svc.t, member, 'read_write')).token;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

describe('triage batch and a worker crash', () => {
  it('a worker SIGKILLed mid-batch: the batch is re-processed, every alert counted exactly once', async () => {
    const doomed = await startWorker();
    // 999 alerts (at most 1,000 per request) of 333 fingerprints: each fingerprint's first alert opens an incident (its own
    // transaction), the repeats are counted together at the end of the pass.
    const fingerprints = 333;
    const body = Array.from({ length: 999 }, (_, i) => ({
      title: `crash alert ${i % fingerprints}`,
      severity: 'high',
      source: 'e2e',
      fingerprint: `crash-${i % fingerprints}`,
    }));
    const res = await call(svc.base, 'POST', '/api/v1/triage/alerts', { token, body });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(999);
    // Kill the worker once it has decided some of the batch, but not all of it.
    const atKill = await until('the batch to be under way', async () => {
      const n = await processed();
      return n > 0 ? n : undefined;
    });
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const afterKill = await processed();
    expect(atKill).toBeLessThan(999);
    expect(afterKill).toBeLessThan(999); // the in-memory repeats of the pass died with it
    await startWorker();
    await until('every alert to be decided', async () => ((await processed()) === 999 ? true : undefined));
    const events = await svc.t.db
      .selectFrom('triage_events')
      .select(['fingerprint', 'count', 'action', 'incident_id'])
      .where('tenant_id', '=', tenantId)
      .execute();
    expect(events).toHaveLength(fingerprints);
    expect(events.every((e) => e.count === 3)).toBe(true);
    expect(events.reduce((n, e) => n + e.count, 0)).toBe(999);
    expect(new Set(events.map((e) => e.fingerprint)).size).toBe(fingerprints);
    const incidents = await svc.t.db
      .selectFrom('incidents')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    expect(incidents.n).toBe(fingerprints);
    // Every inbox row points at its fingerprint's event.
    const orphans = await svc.t.db
      .selectFrom('triage_inbox as b')
      .leftJoin('triage_events as e', 'e.id', 'b.event_id')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('b.tenant_id', '=', tenantId)
      .where(sql<boolean>`e.fingerprint is distinct from b.alert->>'fingerprint'`)
      .executeTakeFirstOrThrow();
    expect(orphans.n).toBe(0);
  });
});
