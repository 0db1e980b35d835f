import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/** Inventory tables the sandbox may read, each under row-level security on the tenant. */
const SANDBOXED = [
  'resources',
  'resource_edges',
  'resource_history',
  'metrics_daily',
  'cost_daily',
  'inventory_events',
  'inventory_snapshots',
];

const statements = [
  sql`create extension if not exists pg_trgm`,
  sql`create table finding_groups (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    fingerprint text not null,
    check_id text not null,
    domain text not null check (domain in ('finops', 'security', 'sre')),
    title text not null,
    highest_severity text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    unique (tenant_id, fingerprint)
  )`,
  sql`create table findings (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    group_id uuid not null references finding_groups(id),
    check_id text not null,
    fingerprint text not null,
    domain text not null check (domain in ('finops', 'security', 'sre')),
    title text not null,
    severity text not null check (severity in ('critical', 'high', 'medium', 'low', 'info')),
    severity_rank integer not null,
    status text not null default 'open'
      check (status in ('open', 'acknowledged', 'in_progress', 'resolved', 'dismissed', 'confirmed')),
    narrative text not null,
    run_reasoning text not null default '',
    producing_agent text not null,
    confidence real not null check (confidence >= 0 and confidence <= 1),
    estimated_savings numeric(14, 2) not null default 0,
    sighting_count integer not null default 1,
    regressed boolean not null default false,
    scan_id uuid references inventory_scans(id),
    detected_at timestamptz not null default now(),
    last_seen_at timestamptz not null default now(),
    last_reinvestigated_at timestamptz,
    resolved_at timestamptz,
    resolved_by text,
    updated_at timestamptz not null default now()
  )`,
  sql`create index findings_tenant_status on findings (tenant_id, status, severity_rank)`,
  sql`create index findings_group on findings (group_id)`,
  sql`create index findings_title_trgm on findings using gin (title gin_trgm_ops)`,
  sql`create table finding_resources (
    finding_id uuid not null references findings(id) on delete cascade,
    tenant_id uuid not null references tenants(id),
    arn text not null,
    type text not null,
    native_id text not null,
    name text,
    account_id text not null,
    region text not null,
    measured_size numeric,
    size_unit text,
    monthly_cost numeric(14, 2),
    console_url text,
    action_type text not null,
    savings numeric(14, 2) not null default 0,
    primary key (finding_id, arn)
  )`,
  sql`create index finding_resources_arn on finding_resources (tenant_id, arn)`,
  sql`create table recommendations (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    finding_id uuid not null unique references findings(id) on delete cascade,
    rationale text not null,
    action_type text not null,
    savings numeric(14, 2) not null default 0,
    effort text not null check (effort in ('low', 'medium', 'high')),
    priority integer not null check (priority between 1 and 5),
    created_at timestamptz not null default now()
  )`,
  sql`create table finding_audit_steps (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    finding_id uuid not null references findings(id) on delete cascade,
    seq integer not null,
    step_kind text not null check (step_kind in ('query', 'tool', 'reasoning')),
    tool_name text not null,
    title text not null,
    query_sql text,
    status text not null check (status in ('success', 'error')),
    error_message text,
    result_preview jsonb,
    row_count integer,
    duration_ms integer,
    is_self_correction boolean not null default false,
    rerunnable boolean not null default false,
    result_hash text,
    executed_at timestamptz not null default now(),
    unique (finding_id, seq)
  )`,
  sql`create table finding_group_events (
    id bigserial primary key,
    tenant_id uuid not null references tenants(id),
    group_id uuid not null references finding_groups(id),
    finding_id uuid references findings(id) on delete cascade,
    kind text not null,
    agent text not null,
    status text,
    detail jsonb not null default '{}'::jsonb,
    at timestamptz not null default now()
  )`,
  sql`create index finding_group_events_group on finding_group_events (group_id, at)`,
  sql`create table notifications (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    kind text not null,
    title text not null,
    body text not null,
    finding_id uuid references findings(id) on delete set null,
    created_at timestamptz not null default now(),
    read_at timestamptz
  )`,
  sql`create index notifications_tenant on notifications (tenant_id, created_at desc)`,
  // The sandbox for untrusted SQL (audit-step re-runs, agent SQL): a role that can log in nowhere, read
  // only the inventory, and see only the tenant named in the transaction's opsi.tenant_id setting.
  sql`do $$ begin create role opsi_sandbox nologin; exception when duplicate_object then null; end $$`,
  sql`do $$ begin execute format('grant opsi_sandbox to %I', current_user); exception when others then null; end $$`,
  // The policy reads opsi.tenant_id; only set_config() could change it from inside a query. Nothing but
  // the service's own role may call it (grant it to a backup role too: pg_dump uses it).
  sql`revoke execute on function pg_catalog.set_config(text, text, boolean) from public`,
  sql`do $$ begin execute format('grant execute on function pg_catalog.set_config(text, text, boolean) to %I', current_user); end $$`,
  sql`revoke all on schema public from opsi_sandbox`,
  sql`grant usage on schema public to opsi_sandbox`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
  for (const table of SANDBOXED) {
    await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
    await sql`create policy ${sql.id(`${table}_tenant`)} on ${sql.table(table)} for select to opsi_sandbox
      using (tenant_id = nullif(current_setting('opsi.tenant_id', true), '')::uuid)`.execute(db);
    await sql`grant select on ${sql.table(table)} to opsi_sandbox`.execute(db);
  }
  await sql`grant select on prices to opsi_sandbox`.execute(db);
}
