import { sql, type Db } from '@opsi/db';

/**
 * Every column the sync writes, minus the ones that differ by construction between two tenants or
 * databases (ids, tenant, connection, snapshot).
 */
const COLUMNS: Record<string, string[]> = {
  resources: [
    'arn',
    'type',
    'native_id',
    'account_id',
    'region',
    'availability_zone',
    'name',
    'tags',
    'attributes',
    'size_value',
    'size_unit',
    'monthly_cost',
    'console_url',
    'content_hash',
    'first_seen',
    'last_seen',
    'deleted_at',
  ],
  resource_history: ['arn', 'type', 'observed_at', 'change', 'changed_fields', 'before', 'after'],
  resource_edges: ['from_arn', 'to_arn', 'kind', 'source', 'confidence', 'first_seen', 'last_seen'],
  metrics_daily: ['arn', 'metric', 'day', 'avg', 'max', 'sum'],
  cost_daily: ['arn', 'day', 'product_code', 'usage_type', 'unblended_cost'],
  inventory_events: [
    'kind',
    'at',
    'name',
    'actor',
    'source_ip',
    'fingerprint',
    'severity',
    'service',
    'arns',
    'payload',
    'dedupe_key',
  ],
};

export const TABLES = Object.keys(COLUMNS);

export interface TableChecksum {
  rows: number;
  sum: string;
}

/**
 * Per table: the tenant's row count and an order-independent checksum of its rows (the sum of a
 * 64-bit hash of each row's text), so two writers' results can be compared value for value.
 */
export async function checksums(db: Db, tenantId: string): Promise<Record<string, TableChecksum>> {
  const out: Record<string, TableChecksum> = {};
  for (const [table, cols] of Object.entries(COLUMNS)) {
    const row = await sql<{ rows: string; sum: string }>`
      select count(*)::text as rows, coalesce(sum(hashtextextended(row(${sql.raw(cols.join(', '))})::text, 0)::numeric), 0)::text as sum
      from ${sql.table(table)} where tenant_id = ${tenantId}::uuid`.execute(db);
    out[table] = { rows: Number(row.rows[0]!.rows), sum: row.rows[0]!.sum };
  }
  return out;
}

/** Tables whose checksum differs, with both sides. */
export function differences(a: Record<string, TableChecksum>, b: Record<string, TableChecksum>): string[] {
  return TABLES.filter((t) => a[t]?.rows !== b[t]?.rows || a[t]?.sum !== b[t]?.sum).map(
    (t) => `${t}: ${a[t]?.rows} rows / ${a[t]?.sum} vs ${b[t]?.rows} rows / ${b[t]?.sum}`,
  );
}

/** Cumulative tuple counters of the six tables (pg_stat_user_tables), for what a phase wrote. */
export async function tupleCounters(
  db: Db,
): Promise<Record<string, { ins: number; upd: number; hot: number; del: number }>> {
  const r = await sql<{ relname: string; ins: string; upd: string; hot: string; del: string }>`
    select relname, n_tup_ins::text as ins, n_tup_upd::text as upd, n_tup_hot_upd::text as hot, n_tup_del::text as del
    from pg_stat_user_tables where relname in (${sql.join(TABLES)})`.execute(db);
  return Object.fromEntries(
    r.rows.map((x) => [
      x.relname,
      { ins: Number(x.ins), upd: Number(x.upd), hot: Number(x.hot), del: Number(x.del) },
    ]),
  );
}
