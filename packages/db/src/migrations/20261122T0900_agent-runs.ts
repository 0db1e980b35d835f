import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).
const statements = [
  // Soft delete: audit entries and runs keep naming the tenant; the scheduler drops its schedules.
  sql`alter table tenants add column deleted_at timestamptz`,
  // Session ids may be chosen by the client (1..128 of [A-Za-z0-9._:-]), so they are text and global:
  // the same id in another tenant is that tenant's session, and a 404 here.
  sql`create table agent_sessions (
    id text primary key check (id ~ '^[A-Za-z0-9._:-]{1,128}$'),
    tenant_id uuid not null references tenants(id),
    created_by uuid references users(id),
    name text not null check (length(name) between 1 and 200),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  sql`create index agent_sessions_tenant on agent_sessions (tenant_id, updated_at desc)`,
  sql`create table agent_runs (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    session_id text not null references agent_sessions(id) on delete cascade,
    token_id uuid references api_tokens(id),
    status text not null default 'queued' check (status in ('queued', 'running', 'completed', 'failed')),
    prompt text not null,
    selected_tools text[],
    attempts integer not null default 0,
    last_seq integer not null default 0,
    reply text,
    error text,
    terminal_event jsonb,
    created_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz
  )`,
  sql`create index agent_runs_session on agent_runs (session_id, created_at desc)`,
  sql`create index agent_runs_open on agent_runs (created_at) where status in ('queued', 'running')`,
  sql`create table agent_messages (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    session_id text not null references agent_sessions(id) on delete cascade,
    run_id uuid references agent_runs(id) on delete cascade,
    role text not null check (role in ('user', 'assistant')),
    content text not null,
    created_at timestamptz not null default now()
  )`,
  sql`create index agent_messages_session on agent_messages (session_id, created_at)`,
  // One assistant message per run, however many times a run is retried or resumed.
  sql`create unique index agent_messages_one_reply on agent_messages (run_id) where role = 'assistant'`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
