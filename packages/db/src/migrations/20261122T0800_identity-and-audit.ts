import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call: PGlite's extended protocol runs one statement at a time.
const statements = [
  sql`create table tenants (
    id uuid primary key default gen_random_uuid(),
    slug text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
    name text not null check (length(name) between 1 and 200),
    tier text not null default 'free' check (tier in ('free', 'team', 'enterprise')),
    timezone text not null default 'UTC',
    daily_agent_budget integer not null default 200 check (daily_agent_budget >= 0),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  sql`create table users (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    email text not null check (email ~ '^[^@\\s]+@[^@\\s]+$'),
    name text not null,
    password_hash text not null,
    role text not null default 'member' check (role in ('owner', 'admin', 'member', 'viewer')),
    created_at timestamptz not null default now(),
    deleted_at timestamptz
  )`,
  // Login takes only an email, so an email names one live user across all tenants.
  sql`create unique index users_email_live on users (lower(email)) where deleted_at is null`,
  sql`create index users_tenant on users (tenant_id)`,
  sql`create table api_tokens (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    user_id uuid not null references users(id),
    name text not null check (length(name) between 1 and 100),
    scope text not null check (scope in ('read', 'read_write')),
    token_hash text not null unique,
    token_hint text not null,
    created_at timestamptz not null default now(),
    expires_at timestamptz,
    last_used_at timestamptz,
    revoked_at timestamptz
  )`,
  sql`create index api_tokens_owner on api_tokens (tenant_id, user_id, created_at desc)`,
  sql`create table browser_sessions (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    user_id uuid not null references users(id),
    secret_hash text not null unique,
    csrf_token text not null,
    created_at timestamptz not null default now(),
    expires_at timestamptz not null,
    ended_at timestamptz
  )`,
  sql`create table audit_log (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    seq bigint not null check (seq >= 1),
    at timestamptz not null,
    actor jsonb not null,
    action text not null,
    target_type text not null,
    target_id text,
    details jsonb not null default '{}'::jsonb,
    prev_hash text not null,
    hash text not null,
    unique (tenant_id, seq),
    unique (tenant_id, prev_hash)
  )`,
  sql`create function audit_log_refuse_change() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_log is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
    end
  $$`,
  sql`create trigger audit_log_no_update_delete before update or delete on audit_log
    for each row execute function audit_log_refuse_change()`,
  sql`create trigger audit_log_no_truncate before truncate on audit_log
    for each statement execute function audit_log_refuse_change()`,
  sql`create table service_meta (
    key text primary key,
    value jsonb not null,
    updated_at timestamptz not null default now()
  )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
