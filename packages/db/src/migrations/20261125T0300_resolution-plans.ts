import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/**
 * Guided resolution: one plan per duplicate cluster (unique per tenant and group, so concurrent
 * get-or-create calls share one plan), its steps, the savings realized when a plan's final check
 * resolves a cluster, and where a learning came from (`plan` for what a resolved plan taught).
 */
const statements = [
  sql`create table resolution_plans (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    group_id uuid not null references finding_groups(id),
    finding_id uuid not null references findings(id),
    status text not null default 'generating'
      check (status in ('generating', 'ready', 'failed', 'finalizing', 'resolved')),
    stale boolean not null default false,
    error text,
    engine text not null default 'builtin',
    attempt integer not null default 1,
    evidence_hash text,
    generation_started_at timestamptz not null default now(),
    final_check jsonb,
    created_by text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    resolved_at timestamptz,
    unique (tenant_id, group_id)
  )`,
  sql`create index resolution_plans_finding on resolution_plans (tenant_id, finding_id)`,
  sql`create table resolution_plan_steps (
    plan_id uuid not null references resolution_plans(id) on delete cascade,
    tenant_id uuid not null references tenants(id),
    seq integer not null check (seq between 1 and 8),
    title text not null,
    instructions text not null,
    citations jsonb not null default '[]',
    fix_command text,
    verification jsonb,
    check_spec jsonb,
    how_to_confirm text,
    status text not null default 'pending'
      check (status in ('pending', 'verifying', 'verified', 'confirmed', 'skipped', 'failed_check')),
    final boolean not null default false,
    last_check jsonb,
    skip_reason text,
    done_by text,
    done_at timestamptz,
    primary key (plan_id, seq)
  )`,
  sql`create table realized_savings (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    plan_id uuid not null references resolution_plans(id),
    attempt integer not null,
    group_id uuid not null references finding_groups(id),
    finding_id uuid not null references findings(id),
    monthly_usd numeric(14, 2) not null check (monthly_usd >= 0),
    realized_at timestamptz not null default now(),
    unique (plan_id, attempt)
  )`,
  sql`create index realized_savings_tenant on realized_savings (tenant_id, realized_at)`,
  // The knowledge work (issue 15) gives learnings a source too; "if not exists" lets either land first.
  sql`alter table learnings add column if not exists source text not null default 'user'`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
