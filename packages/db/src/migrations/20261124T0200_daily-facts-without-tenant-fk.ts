import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

// metrics_daily and cost_daily hold a month of daily rows per resource: about 3 million for a
// 100,000-resource estate, nearly all of them written by a tenant's first sync. Their foreign key to
// tenants checked every one of those rows against the tenants table (a lookup and a row lock each), which
// was about 45 % of their insert cost in Postgres (measured: 1.92 M cost lines, 20.7 s with the key,
// 11.8 s without). Only syncInventory writes them, with the tenant id of the connection row it holds
// locked for the whole transaction, so the key guarded nothing the writer does not; tenant_id stays on
// every row, under the same row-level security as before.
const statements = [
  sql`alter table metrics_daily drop constraint metrics_daily_tenant_id_fkey`,
  sql`alter table cost_daily drop constraint cost_daily_tenant_id_fkey`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
