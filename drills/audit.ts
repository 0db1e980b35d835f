import { sql } from '@opsi/db';
import type { Drill, DrillContext } from './lib/types';

// The organization audit log is a hash chain. A plain UPDATE is refused by the table's trigger; an
// UPDATE forced past it (as the database owner, with triggers off) on one row of one field must be
// found by GET /api/v1/audit/verify, naming that row.

const TAMPERS: Array<[string, string]> = [
  ['details', `details = details || '{"tampered": true}'::jsonb`],
  ['actor', `actor = actor || '{"forged": true}'::jsonb`],
  ['at', `at = at - interval '1 second'`],
  ['action', `action = 'token.mint'`],
  ['target_id', `target_id = null`],
];

async function verify(ctx: DrillContext, token: string) {
  const res = await fetch(`${ctx.stack.apis[1]!.url}/api/v1/audit/verify`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return {
    status: res.status,
    body: (await res.json()) as { valid: boolean; first_invalid_id: string | null },
  };
}

export const drill: Drill = {
  name: 'audit',
  description: 'audit chain tamper: one row UPDATEd; detected by verify',
  async run(ctx) {
    const cases = TAMPERS.slice(0, ctx.scale(TAMPERS.length, 2));
    let cleanValid = 0;
    let refused = 0;
    let detected = 0;
    const db = ctx.stack.database.db;
    for (const [column, set] of cases) {
      const tenant = await ctx.newTenant();
      // A few entries: token mints (two at creation), a revocation, another mint through the browser.
      await fetch(`${ctx.stack.api.url}/api/v1/tokens/${tenant.tokenIds.read}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${tenant.tokens.read_write}` },
      });
      await fetch(`${ctx.stack.api.url}/api/v1/tokens`, {
        method: 'POST',
        headers: {
          cookie: tenant.session.cookie,
          'x-csrf-token': tenant.session.csrf,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'drill', scope: 'read' }),
      });
      const clean = await verify(ctx, tenant.tokens.read_write);
      if (clean.status === 200 && clean.body.valid) cleanValid++;
      const rows = await db
        .selectFrom('audit_log')
        .select(['id', 'seq'])
        .where('tenant_id', '=', tenant.id)
        .orderBy('seq')
        .execute();
      const target = rows[Math.floor(rows.length / 2)]!;
      // A plain UPDATE, as anyone with write access to the table would try it.
      const plain = await sql
        .raw(`update audit_log set action = 'x' where id = '${target.id}'`)
        .execute(db)
        .then(
          () => false,
          () => true,
        );
      if (plain) refused++;
      // Forced: the database owner turns triggers off for the transaction.
      await db.transaction().execute(async (tx) => {
        await sql`set local session_replication_role = replica`.execute(tx);
        await sql.raw(`update audit_log set ${set} where id = '${target.id}'`).execute(tx);
      });
      const after = await verify(ctx, tenant.tokens.read_write);
      const ok = after.status === 200 && !after.body.valid && after.body.first_invalid_id === target.id;
      if (ok) detected++;
      else
        ctx.log(
          `${column}: verify answered ${after.status} ${JSON.stringify(after.body)} (tampered ${target.id})`,
        );
    }
    const row = (measure: string, value: number | string, target: string, pass: boolean) => ({
      drill: 'audit',
      measure,
      value,
      target,
      pass,
    });
    const n = cases.length;
    return [
      row('untampered chains verified valid', `${cleanValid}/${n}`, `${n}/${n}`, cleanValid === n),
      row('plain UPDATEs refused by the append-only trigger', `${refused}/${n}`, `${n}/${n}`, refused === n),
      row(
        `forced one-row UPDATEs detected by verify (${cases.map((c) => c[0]).join(', ')})`,
        `${detected}/${n}`,
        `${n}/${n}`,
        detected === n,
      ),
    ];
  },
};
