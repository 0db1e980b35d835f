import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { connectEnvironment, requestScan, runScan } from '../inventory';
import { getPlan } from './plans';

let t: TestContext;
let a: TestMember;

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await runScan(t.db, (await requestScan(t.db, null, a.tenant.id, 'test')).id);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('a plan is read from one snapshot', () => {
  it('a generation that commits between the read of the plan and of its steps is seen whole or not at all', async () => {
    const finding = await t.db
      .selectFrom('findings')
      .select(['id', 'group_id'])
      .where('tenant_id', '=', a.tenant.id)
      .where('status', '=', 'open')
      .executeTakeFirstOrThrow();
    const plan = await t.db
      .insertInto('resolution_plans')
      .values({
        tenant_id: a.tenant.id,
        group_id: finding.group_id,
        finding_id: finding.id,
        created_by: 'test',
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    // A generation as the worker commits it (steps, then the plan ready), holding the steps table so a
    // reader's second statement waits until the commit while its first one has already read the plan.
    const generator = new pg.Client({ connectionString: t.database.url });
    await generator.connect();
    try {
      await generator.query('begin');
      await generator.query('lock table resolution_plan_steps in access exclusive mode');
      await generator.query(
        `insert into resolution_plan_steps (plan_id, tenant_id, seq, title, instructions, citations, final)
         values ($1, $2, 1, 'Look', 'Look at it', '[]', false), ($1, $2, 2, 'Check', 'Run the detection', '[]', true)`,
        [plan.id, a.tenant.id],
      );
      await generator.query(`update resolution_plans set status = 'ready' where id = $1`, [plan.id]);

      const reading = getPlan(t.db, a.tenant.id, plan.id);
      // wait until the reader is blocked on the steps table (its plan read is done)
      for (let i = 0; i < 200; i++) {
        const { rows } = await generator.query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        );
        if (rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      await generator.query('commit');
      const seen = await reading;
      // whole (ready with its steps) or not at all (generating, no steps): never generating with steps
      expect({ status: seen.status, steps: seen.steps.length }).toEqual(
        seen.status === 'ready' ? { status: 'ready', steps: 2 } : { status: 'generating', steps: 0 },
      );
    } finally {
      await generator.end();
    }
    const after = await getPlan(t.db, a.tenant.id, plan.id);
    expect({ status: after.status, steps: after.steps.length }).toEqual({ status: 'ready', steps: 2 });
  });
});
