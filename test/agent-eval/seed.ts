import { collectWorld, createDemoConnector, PriceBook, syncInventory, type DemoSpec } from '@opsi/inventory';
import { createLearning, runResilience, triageInventoryAlerts, type Auth } from '@opsi/core';
import { DETECTORS, runDetectors } from '@opsi/detectors';
import type { Db } from '@opsi/db';
import type { TestMember } from '@opsi/test-support';

/** The seeded demo the evaluation set is written against: seed 42, small, epoch 2026-11-01, day 0. */
export const EVAL_SPEC: DemoSpec = { seed: 42, size: 'small', epoch: '2026-11-01', day: 0, commands: [] };

/** What the eval tenant's team has taught, through the learnings service (the questions about learnings rest on these). */
export const EVAL_LEARNINGS: Array<{ fact: string; service?: string }> = [
  {
    fact: 'Month-end batch jobs push prod-payments-db CPU above 90% for about two hours; page only if it lasts longer.',
    service: 'payments',
  },
  {
    fact: 'Never resize prod-payments-db during business hours: the failover drops open payment sessions.',
    service: 'payments',
  },
];

/**
 * Syncs the demo environment (its backfilled past and its present) into a tenant, as a first scan
 * would: the same steps as syncDemo in @opsi/detectors' tests, which that package does not export.
 */
export async function syncDemo(db: Db, tenantId: string, spec: DemoSpec = EVAL_SPEC) {
  const book = await PriceBook.load(db);
  const conn = await db
    .insertInto('cloud_connections')
    .values({ tenant_id: tenantId, kind: 'demo', config: '{}' })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ updated_at: new Date() }))
    .returning('id')
    .executeTakeFirstOrThrow();
  const connector = createDemoConnector(spec, book);
  for (const inv of [...connector.backfill(), await connector.collect({})]) {
    await syncInventory(db, { tenantId, connectionId: conn.id, scanId: null }, inv, book);
  }
  return { book, connectionId: conn.id, world: collectWorld(spec, book) };
}

/** A member's session, as the API resolves one, for the services that take an Auth. */
export function authOf(member: TestMember): Auth {
  return {
    kind: 'session',
    tenant: { ...member.tenant, timezone: 'UTC', daily_agent_budget: 200 },
    user: member.user,
    session: { id: 'agent-eval', csrf_token: 'agent-eval', expires_at: new Date(Date.now() + 3_600_000) },
  };
}

/**
 * The whole state an evaluation question is asked over, made as the service makes it after a first
 * scan: the demo synced (inventory, its history, its dependency graph in resource_edges), every
 * detector run (findings), the scan's alert events through the triage pipeline (the demo storyline's
 * incidents: the past resolved one and the open SEV1 that recurs it, alerts attached), the resilience
 * engine run on the graph (as the worker's `resilience` job does), and the team's learnings taught
 * through the learnings service (`createLearning`, what POST /api/v1/learnings calls).
 */
export async function seedEvalTenant(
  db: Db,
  member: TestMember,
  opts: { spec?: DemoSpec; learnings?: Array<{ fact: string; service?: string | undefined }> } = {},
) {
  const tenantId = member.tenant.id;
  const synced = await syncDemo(db, tenantId, opts.spec ?? EVAL_SPEC);
  await runDetectors(db, tenantId, DETECTORS);
  // The worker's triage job after a scan (its windows are the configuration's defaults).
  const triage = await triageInventoryAlerts(
    { db, dedupeWindowMinutes: 30, correlationWindowMinutes: 120 },
    tenantId,
  );
  await runResilience(db, tenantId);
  const auth = authOf(member);
  for (const l of opts.learnings ?? []) await createLearning(db, auth, l);
  return { ...synced, triage };
}
