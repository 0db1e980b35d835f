import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

const statements = [
  // The resilience engine's runs: one per scan (the pulse.resilience job), the latest ready one served.
  sql`create table resilience_runs (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    snapshot_id uuid,
    scan_id uuid,
    status text not null check (status in ('computing', 'ready', 'failed')),
    started_at timestamptz not null default now(),
    finished_at timestamptz,
    scenarios integer not null default 0,
    findings jsonb not null default '[]'::jsonb,
    risks jsonb not null default '[]'::jsonb,
    stats jsonb not null default '{}'::jsonb,
    error text
  )`,
  sql`create index resilience_runs_tenant on resilience_runs (tenant_id, started_at desc)`,
  // GET /graph/search matches this one expression (ARN, native id, name, tag values), so a trigram index
  // serves it on a 100,000-resource inventory.
  sql`create index resources_search_trgm on resources using gin (
    (lower(arn || ' ' || native_id || ' ' || coalesce(name, '') || ' ' || jsonb_path_query_array(tags, '$.*')::text)) gin_trgm_ops
  ) where deleted_at is null`,
  sql`create index resource_history_tenant_observed on resource_history (tenant_id, observed_at)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
