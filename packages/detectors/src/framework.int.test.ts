import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import {
  createTenantWithUser,
  createTestContext,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { ebsUnattached } from './finops/ebs-unattached';
import { runDetectors } from './runner';
import { DEFAULT_LIMITS, runSandboxed, SandboxRefused } from './sandbox';
import { savingsTotal } from './savings';
import { syncDemo } from './testing';

let t: TestContext;
let a: TestMember;
let b: TestMember;

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  b = await createTenantWithUser(t);
  await syncDemo(t.db, a.tenant.id);
  await syncDemo(t.db, b.tenant.id, { seed: 43, size: 'small', epoch: '2026-11-01', day: 0, commands: [] });
}, 60_000);
afterAll(() => t?.close());

describe('the sandbox', () => {
  it('scopes every query to the tenant by row-level security', async () => {
    const mine = await runSandboxed(
      t.db,
      a.tenant.id,
      'select count(*)::int as n, count(distinct tenant_id)::int as tenants from resources',
    );
    expect(mine.rows[0]).toEqual({ n: expect.any(Number), tenants: 1 });
    const probe = await runSandboxed(
      t.db,
      a.tenant.id,
      `select count(*)::int as n from resources where tenant_id = '${b.tenant.id}'`,
    );
    expect(probe.rows[0]).toEqual({ n: 0 });
  });

  it('refuses writes, other statements, other tables, tenant switching, and runaway queries', async () => {
    const hostile = [
      `delete from resources`,
      `update resources set name = 'x'`,
      `select 1; delete from resources`,
      `select * from users`,
      `select * from api_tokens`,
      `select * from audit_log`,
      `select set_config('opsi.tenant_id', '${b.tenant.id}', true), count(*) from resources`,
      `select * from resources r where set_config('opsi.tenant_id', '${b.tenant.id}', true) is not null`,
      `with x as (delete from resources returning *) select * from x`,
      `select pg_sleep(10)`,
      `select pg_read_file('/etc/passwd')`,
      `select * from (select 1) q) x; drop table resources; --`,
    ];
    for (const query of hostile) {
      await expect(
        runSandboxed(t.db, a.tenant.id, query, { timeoutMs: 500, maxRows: 10, maxBytes: 10_000 }),
        query,
      ).rejects.toThrow();
    }
    const count = await t.db
      .selectFrom('resources')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(count.n).toBeGreaterThan(0);
    expect(await runSandboxed(t.db, a.tenant.id, 'select 1 as ok')).toMatchObject({ rows: [{ ok: 1 }] });
    await expect(runSandboxed(t.db, a.tenant.id, 'drop table resources')).rejects.toBeInstanceOf(
      SandboxRefused,
    );
  });

  it('cannot take advisory locks (session or transaction), so none outlives a re-run', async () => {
    const locks = [
      'select pg_advisory_lock(42)',
      'select pg_advisory_lock(4, 2)',
      'select pg_advisory_lock_shared(42)',
      'select pg_try_advisory_lock(42)',
      'select pg_try_advisory_lock_shared(4, 2)',
      'select pg_advisory_xact_lock(42)',
      'select pg_advisory_xact_lock_shared(42)',
      'select pg_try_advisory_xact_lock(42)',
      'select pg_try_advisory_xact_lock_shared(42)',
      'select pg_advisory_unlock_all()',
      'select pg_advisory_unlock(42)',
      `select r.id, pg_try_advisory_lock(hashtext(r.id::text)) from resources r`,
    ];
    for (const query of locks)
      await expect(runSandboxed(t.db, a.tenant.id, query), query).rejects.toThrow(/permission denied/);
    const held = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_locks where locktype = 'advisory'`.execute(t.db);
    expect(held.rows[0]!.n).toBe(0);
    // The service's own role keeps them (the audit chain and others take transaction locks).
    const own = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(42) as ok`.execute(t.db);
    expect(own.rows[0]!.ok).toBe(true);
  });

  it('sets work_mem and temp_file_limit for the re-run only', async () => {
    const inside = await runSandboxed(
      t.db,
      a.tenant.id,
      `select current_setting('work_mem') as work_mem, current_setting('temp_file_limit') as temp_file_limit`,
    );
    expect(inside.rows[0]).toEqual({ work_mem: '8MB', temp_file_limit: '64MB' });
    // A sort that spills past the limit fails instead of filling the disk.
    await expect(
      runSandboxed(t.db, a.tenant.id, 'select g from generate_series(1, 3000000) g order by g desc', {
        ...DEFAULT_LIMITS,
        workMemKb: 64,
        tempFileLimitKb: 1024,
      }),
    ).rejects.toThrow(/temp_file_limit/);
    const outside = await sql<{
      w: string;
      t: string;
    }>`select current_setting('work_mem') as w, current_setting('temp_file_limit') as t`.execute(t.db);
    expect(outside.rows[0]).not.toEqual({ w: '8MB', t: '64MB' });
  });

  it('caps rows and bytes', async () => {
    const many = await runSandboxed(t.db, a.tenant.id, 'select g from generate_series(1, 100) g', {
      timeoutMs: 1000,
      maxRows: 10,
      maxBytes: 100_000,
    });
    expect(many).toMatchObject({ rowCount: 10, truncated: true });
    const big = await runSandboxed(t.db, a.tenant.id, `select repeat('x', 5000000) as s`, {
      timeoutMs: 2000,
      maxRows: 10,
      maxBytes: 1000,
    });
    expect(big.truncated).toBe(true);
    expect(JSON.stringify(big.rows).length).toBeLessThan(2000);
  });
});

describe('the runner', () => {
  it('records findings with their trail, clusters rediscoveries, and counts savings once', async () => {
    const first = await runDetectors(t.db, a.tenant.id, [ebsUnattached]);
    expect(first).toMatchObject({ newFindings: 3, failedQueries: 0 });
    const findings = await t.db
      .selectFrom('findings')
      .selectAll()
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    expect(findings.map((f) => f.status)).toEqual(['open', 'open', 'open']);
    const steps = await t.db
      .selectFrom('finding_audit_steps')
      .selectAll()
      .where('finding_id', '=', findings[0]!.id)
      .orderBy('seq')
      .execute();
    expect(steps.map((s) => [s.seq, s.step_kind, s.rerunnable])).toEqual([
      [1, 'query', true],
      [2, 'query', true],
      [3, 'reasoning', false],
    ]);
    expect(steps[1]!.query_sql).toContain(findings[0]!.fingerprint ? 'detector_rows' : '');
    const again = await runDetectors(t.db, a.tenant.id, [ebsUnattached]);
    expect(again).toMatchObject({ newFindings: 0, rediscovered: 3 });
    const third = await runDetectors(t.db, a.tenant.id, [ebsUnattached]);
    expect(third).toMatchObject({ newFindings: 0, rediscovered: 3 });
    const after = await t.db
      .selectFrom('findings')
      .select(['status', 'sighting_count'])
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    expect(after.filter((f) => f.status === 'open')).toHaveLength(3);
    expect(after.filter((f) => f.status === 'confirmed').map((f) => f.sighting_count)).toEqual([2, 2, 2]);
    // 200 GB gp2 ($20) + 500 GB io1 at 4000 IOPS ($322.50) + 50 GB gp3 ($4)
    expect(await savingsTotal(t.db, a.tenant.id)).toMatchObject({ monthly: 346.5, resources: 3 });
    expect(await savingsTotal(t.db, b.tenant.id)).toMatchObject({ monthly: 0 });
  });

  it('a near-duplicate from another detector joins the group as confirmed; a distinct check does not', async () => {
    const c = await createTenantWithUser(t);
    await syncDemo(t.db, c.tenant.id);
    await runDetectors(t.db, c.tenant.id, [ebsUnattached]);
    const twin = { ...ebsUnattached, id: 'finops.ebs_available_twin' };
    const distinct = {
      ...ebsUnattached,
      id: 'finops.ebs_review',
      findings: (rows: Parameters<typeof ebsUnattached.findings>[0]) =>
        ebsUnattached
          .findings(rows)
          .map((d) => ({ ...d, title: `Review the lifecycle policy of ${d.rootKey.split('/').pop()}` })),
    };
    const summary = await runDetectors(t.db, c.tenant.id, [twin, distinct]);
    expect(summary).toMatchObject({ clustered: 3, newFindings: 3 });
    const rows = await t.db
      .selectFrom('findings')
      .select(['check_id', 'status'])
      .where('tenant_id', '=', c.tenant.id)
      .orderBy('check_id')
      .execute();
    expect(rows.filter((r) => r.check_id === 'finops.ebs_available_twin').map((r) => r.status)).toEqual([
      'confirmed',
      'confirmed',
      'confirmed',
    ]);
    expect(rows.filter((r) => r.check_id === 'finops.ebs_review').map((r) => r.status)).toEqual([
      'open',
      'open',
      'open',
    ]);
  });

  it('a failing query is kept in the trail and retried as a self-correction', async () => {
    const flaky = {
      ...ebsUnattached,
      id: 'finops.flaky',
      sql: `with pause as materialized (select pg_sleep(0.2)) select q.* from (${ebsUnattached.sql}) q, pause`,
    };
    const summary = await runDetectors(t.db, b.tenant.id, [flaky], {
      limits: { timeoutMs: 100, maxRows: 1000, maxBytes: 1_000_000 },
    });
    expect(summary.failedQueries).toBe(1);
    const finding = await t.db
      .selectFrom('findings')
      .select('id')
      .where('tenant_id', '=', b.tenant.id)
      .where('check_id', '=', 'finops.flaky')
      .executeTakeFirstOrThrow();
    {
      const steps = await t.db
        .selectFrom('finding_audit_steps')
        .select(['status', 'is_self_correction'])
        .where('finding_id', '=', finding.id)
        .orderBy('seq')
        .execute();
      expect(steps.slice(0, 2)).toEqual([
        { status: 'error', is_self_correction: false },
        { status: 'success', is_self_correction: true },
      ]);
    }
  });
});
