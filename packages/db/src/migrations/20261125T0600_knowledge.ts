import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/**
 * Knowledge: morning reports (one per tenant and period), installed integrations (notifiers keep their
 * URL and secret encrypted), notifier deliveries (one per notifier and event, with their attempts),
 * tenant runbooks, and the provenance and use of learnings.
 */
const statements = [
  // A report covers (period_from, period_to]. Unique on both ends: a retried job finds its report by
  // period_to, and two generations racing from the same previous report cannot both write one.
  sql`create table morning_reports (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    period_from timestamptz not null,
    period_to timestamptz not null,
    generated_at timestamptz not null default now(),
    requested_by text not null,
    headline text not null,
    sections jsonb not null,
    check (period_from < period_to),
    unique (tenant_id, period_to),
    unique (tenant_id, period_from)
  )`,
  sql`create index morning_reports_latest on morning_reports (tenant_id, period_to desc)`,
  sql`alter table notifications add column report_id uuid references morning_reports(id) on delete cascade`,
  sql`create table tenant_tools (
    tenant_id uuid not null references tenants(id),
    tool_id text not null check (char_length(tool_id) between 1 and 64),
    status text not null default 'active' check (status in ('active', 'disabled')),
    settings jsonb not null default '{}',
    secret_ciphertext text,
    installed_by text not null,
    installed_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    primary key (tenant_id, tool_id)
  )`,
  sql`create table notifier_deliveries (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    tool_id text not null,
    event_kind text not null,
    subject_id text not null,
    status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
    attempts integer not null default 0,
    last_error text,
    response_status integer,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    delivered_at timestamptz,
    unique (tenant_id, tool_id, event_kind, subject_id)
  )`,
  sql`create index notifier_deliveries_tenant on notifier_deliveries (tenant_id, created_at desc)`,
  sql`create table runbooks (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    title text not null check (char_length(title) between 1 and 200),
    service text check (service is null or char_length(service) between 1 and 128),
    applies_to jsonb not null default '{}',
    steps jsonb not null,
    created_by text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  sql`create index runbooks_tenant on runbooks (tenant_id, updated_at desc)`,
  // Resolution plans (issue 12) add learnings.source too, in an earlier migration: "if not exists" lets
  // either land first, and the check applies to both.
  sql`alter table learnings add column if not exists source text not null default 'user'`,
  sql`alter table learnings add constraint learnings_source_known check (source in ('user', 'agent', 'plan'))`,
  sql`alter table learnings add column last_used_at timestamptz`,
  sql`alter table learnings add column used_count integer not null default 0`,
  sql`alter table learnings add column archived_at timestamptz`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
