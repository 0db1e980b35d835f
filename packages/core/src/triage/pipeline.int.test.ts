import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenantWithUser, createTestContext, type TestContext } from '@opsi/test-support';
import { normalizeAlerts } from './normalize';
import { decideAlert } from './pipeline';
import { processAlertBatch } from './triage';

// Two live attempts of one triage job (a stalled job taken over while its first worker still runs) must
// decide each inbox row once: one event, counted once, whichever attempt gets there first.
let t: TestContext;
let tenantId: string;
const deps = () => ({ db: t.db, dedupeWindowMinutes: 30, correlationWindowMinutes: 120 });

beforeAll(async () => {
  t = await createTestContext();
  tenantId = (await createTenantWithUser(t)).tenant.id;
});
afterAll(async () => {
  await t?.close();
});

async function inbox(fingerprint: string, batchId = crypto.randomUUID()) {
  const [alert] = normalizeAlerts({ title: fingerprint, severity: 'low', source: 'test', fingerprint });
  const row = await t.db
    .insertInto('triage_inbox')
    .values({ tenant_id: tenantId, batch_id: batchId, alert: JSON.stringify(alert) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { inboxId: Number(row.id), alert: alert!, batchId };
}

const eventsOf = (fingerprint: string) =>
  t.db
    .selectFrom('triage_events')
    .select(['id', 'count', 'action'])
    .where('tenant_id', '=', tenantId)
    .where('fingerprint', '=', fingerprint)
    .execute();

describe('an inbox row decided by two attempts at once', () => {
  it('a new alert: one event with count 1, and both attempts answer it', async () => {
    const { inboxId, alert } = await inbox('twice-new');
    const [x, y] = await Promise.all([
      decideAlert(deps(), tenantId, alert, { inboxId }),
      decideAlert(deps(), tenantId, alert, { inboxId }),
    ]);
    expect(await eventsOf('twice-new')).toEqual([{ id: x.event_id, count: 1, action: 'new' }]);
    expect(y).toEqual(x);
  });

  it('a repeat: counted once on the existing event', async () => {
    const first = await inbox('twice-repeat');
    await decideAlert(deps(), tenantId, first.alert, { inboxId: first.inboxId });
    const { inboxId, alert } = await inbox('twice-repeat');
    const answers = await Promise.all([
      decideAlert(deps(), tenantId, alert, { inboxId }),
      decideAlert(deps(), tenantId, alert, { inboxId }),
      decideAlert(deps(), tenantId, alert, { inboxId }),
    ]);
    const [event] = await eventsOf('twice-repeat');
    expect(event?.count).toBe(2);
    expect(answers.map((d) => [d.event_id, d.action])).toEqual(
      Array.from({ length: 3 }, () => [event!.id, 'deduplicated']),
    );
    const row = await t.db
      .selectFrom('triage_inbox')
      .select(['event_id', 'action'])
      .where('id', '=', inboxId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ event_id: event!.id, action: 'deduplicated' });
  });

  it('a whole batch taken by two attempts: every alert counted once', async () => {
    const batchId = crypto.randomUUID();
    const rows = [];
    for (let i = 0; i < 12; i++) rows.push(await inbox(`twice-batch-${i % 3}`, batchId));
    const ids = rows.map((r) => r.inboxId);
    await Promise.all([
      processAlertBatch(deps(), tenantId, batchId, ids),
      processAlertBatch(deps(), tenantId, batchId, ids),
    ]);
    const counts = await Promise.all([0, 1, 2].map((k) => eventsOf(`twice-batch-${k}`)));
    expect(counts.map((events) => events.map((e) => e.count))).toEqual([[4], [4], [4]]);
  });
});

describe('resolution flows back', () => {
  async function alertRow(fingerprint: string, status: 'firing' | 'resolved', at: string, batchId: string) {
    const [alert] = normalizeAlerts({
      title: `disk ${fingerprint}`,
      severity: 'critical',
      source: 'test',
      fingerprint,
      status,
      starts_at: at,
    });
    const row = await t.db
      .insertInto('triage_inbox')
      .values({ tenant_id: tenantId, batch_id: batchId, alert: JSON.stringify(alert) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }
  const notes = (incidentId: string) =>
    t.db
      .selectFrom('incident_events')
      .select(['kind', 'body'])
      .where('incident_id', '=', incidentId)
      .where('kind', '=', 'alert_resolved')
      .execute();
  const event = (fingerprint: string) =>
    t.db
      .selectFrom('triage_events')
      .select(['id', 'status', 'count', 'incident_id'])
      .where('tenant_id', '=', tenantId)
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirstOrThrow();

  it('a resolved alert hours after the firing one (past the dedupe window) resolves it, with one note', async () => {
    const b1 = crypto.randomUUID();
    const fired = await alertRow('res-late', 'firing', new Date(Date.now() - 3 * 3600_000).toISOString(), b1);
    await processAlertBatch(deps(), tenantId, b1, [fired]);
    const opened = await event('res-late');
    expect(opened).toMatchObject({ status: 'firing', incident_id: expect.any(String) });
    const b2 = crypto.randomUUID();
    const resolved = await alertRow('res-late', 'resolved', new Date().toISOString(), b2);
    await processAlertBatch(deps(), tenantId, b2, [resolved]);
    expect(await event('res-late')).toEqual({ ...opened, status: 'resolved', count: 2 });
    expect(await notes(opened.incident_id!)).toEqual([
      { kind: 'alert_resolved', body: expect.stringContaining('disk res-late resolved') },
    ]);
  });

  it('in one batch, firing repeats then a resolution: the event ends resolved, every alert counted', async () => {
    const b = crypto.randomUUID();
    const now = Date.now();
    const ids = [
      await alertRow('res-batch', 'firing', new Date(now - 3000).toISOString(), b),
      await alertRow('res-batch', 'firing', new Date(now - 2000).toISOString(), b),
      await alertRow('res-batch', 'resolved', new Date(now - 1000).toISOString(), b),
    ];
    await processAlertBatch(deps(), tenantId, b, ids);
    const e = await event('res-batch');
    expect(e).toMatchObject({ status: 'resolved', count: 3 });
    expect(await notes(e.incident_id!)).toHaveLength(1);
  });
});
