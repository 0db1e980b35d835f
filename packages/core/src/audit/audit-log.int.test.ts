import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import {
  createTestContext,
  createTenantWithUser,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { appendAudit, computeAuditHash, GENESIS_HASH, listAudit, verifyAuditChain } from './audit-log';

let t: TestContext;
let a: TestMember;
let b: TestMember;

beforeAll(async () => {
  t = await createTestContext();
  a = await createTenantWithUser(t);
  b = await createTenantWithUser(t);
});
afterAll(() => t?.close());

const actor = { type: 'system' as const, id: null };

function append(tenantId: string, n: number) {
  return t.db.transaction().execute((tx) =>
    appendAudit(tx, tenantId, {
      actor,
      action: 'test.event',
      target_type: 'test',
      target_id: String(n),
      details: { n },
    }),
  );
}

describe('audit log', () => {
  it('chains entries: each prev_hash is the previous hash, each hash covers the canonical entry', async () => {
    for (let i = 1; i <= 3; i++) await append(a.tenant.id, i);
    const entries = (await listAudit(t.db, a.tenant.id, 10)).reverse();
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(entries[0]!.prev_hash).toBe(GENESIS_HASH);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (i > 0) expect(e.prev_hash).toBe(entries[i - 1]!.hash);
      expect(e.hash).toBe(computeAuditHash(e.prev_hash, { ...e, tenant_id: a.tenant.id }));
    }
    expect(await verifyAuditChain(t.db, a.tenant.id)).toEqual({
      valid: true,
      checked: 3,
      first_invalid_id: null,
    });
  });

  it('never forks under concurrent appends, and tenants have separate chains', async () => {
    await Promise.all(Array.from({ length: 25 }, (_, i) => append(b.tenant.id, i)));
    const entries = await listAudit(t.db, b.tenant.id, 100);
    expect(entries.map((e) => e.seq).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    expect(new Set(entries.map((e) => e.prev_hash)).size).toBe(25);
    expect(await verifyAuditChain(t.db, b.tenant.id)).toEqual({
      valid: true,
      checked: 25,
      first_invalid_id: null,
    });
    expect((await verifyAuditChain(t.db, a.tenant.id)).checked).toBe(3);
  });

  it('is refused UPDATE, DELETE and TRUNCATE by Postgres itself', async () => {
    await expect(
      sql`update audit_log set action = 'x' where tenant_id = ${a.tenant.id}`.execute(t.db),
    ).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_log where tenant_id = ${a.tenant.id}`.execute(t.db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`truncate audit_log`.execute(t.db)).rejects.toThrow(/append-only/);
    expect((await listAudit(t.db, a.tenant.id, 10)).length).toBe(3);
  });

  it('rolls the entry back with the change it records', async () => {
    await expect(
      t.db.transaction().execute(async (tx) => {
        await appendAudit(tx, a.tenant.id, { actor, action: 'doomed', target_type: 'test', target_id: null });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const actions = (await listAudit(t.db, a.tenant.id, 10)).map((e) => e.action);
    expect(actions).not.toContain('doomed');
    expect((await verifyAuditChain(t.db, a.tenant.id)).valid).toBe(true);
  });

  it('reports the first tampered entry when the owner edits a row behind the triggers', async () => {
    const entries = (await listAudit(t.db, a.tenant.id, 10)).reverse();
    const victim = entries[1]!;
    // The database owner can bypass the append-only triggers; verification must still catch the edit.
    await t.db.connection().execute(async (conn) => {
      await sql`set session_replication_role = replica`.execute(conn);
      await sql`update audit_log set details = '{"n": 1000}'::jsonb where id = ${victim.id}`.execute(conn);
      await sql`set session_replication_role = origin`.execute(conn);
    });
    expect(await verifyAuditChain(t.db, a.tenant.id)).toEqual({
      valid: false,
      checked: 2,
      first_invalid_id: victim.id,
    });
    // The other tenant's chain is untouched.
    expect((await verifyAuditChain(t.db, b.tenant.id)).valid).toBe(true);
  });

  it('reports a deleted entry at the entry after the gap', async () => {
    const c = await createTenantWithUser(t);
    for (let i = 1; i <= 4; i++) await append(c.tenant.id, i);
    const entries = (await listAudit(t.db, c.tenant.id, 10)).reverse();
    await t.db.connection().execute(async (conn) => {
      await sql`set session_replication_role = replica`.execute(conn);
      await sql`delete from audit_log where id = ${entries[2]!.id}`.execute(conn);
      await sql`set session_replication_role = origin`.execute(conn);
    });
    expect(await verifyAuditChain(t.db, c.tenant.id)).toEqual({
      valid: false,
      checked: 3,
      first_invalid_id: entries[3]!.id,
    });
  });

  it('verifies across pages', async () => {
    const d = await createTenantWithUser(t);
    for (let i = 1; i <= 7; i++) await append(d.tenant.id, i);
    expect(await verifyAuditChain(t.db, d.tenant.id, 3)).toEqual({
      valid: true,
      checked: 7,
      first_invalid_id: null,
    });
  });
});
