import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/**
 * Incidents with their timeline, war rooms, and the triage pipeline (alerts in, deduplicated, matched,
 * correlated). Timeline event ids come from one bigserial, so they are strictly increasing; an incident's
 * events are written under its row lock, so their commit order is their id order.
 */
const statements = [
  sql`create table incidents (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    title text not null check (char_length(title) between 1 and 300),
    description text,
    severity text not null default 'SEV3' check (severity in ('SEV1', 'SEV2', 'SEV3', 'SEV4')),
    status text not null default 'open' check (status in ('open', 'investigating', 'mitigated', 'resolved')),
    source text not null default 'manual' check (source in ('manual', 'triage')),
    created_by text not null,
    recurrence_of uuid references incidents(id),
    started_at timestamptz not null default now(),
    last_alert_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    resolved_at timestamptz
  )`,
  sql`create index incidents_tenant on incidents (tenant_id, created_at desc, id desc)`,
  sql`create index incidents_open on incidents (tenant_id, status) where status <> 'resolved'`,
  sql`create table incident_resources (
    tenant_id uuid not null references tenants(id),
    incident_id uuid not null references incidents(id) on delete cascade,
    arn text not null,
    added_at timestamptz not null default now(),
    primary key (incident_id, arn)
  )`,
  sql`create index incident_resources_arn on incident_resources (tenant_id, arn)`,
  sql`create table incident_events (
    id bigserial primary key,
    tenant_id uuid not null references tenants(id),
    incident_id uuid not null references incidents(id) on delete cascade,
    kind text not null,
    body text not null,
    actor text not null,
    data jsonb not null default '{}'::jsonb,
    run_id uuid,
    created_at timestamptz not null default now()
  )`,
  sql`create index incident_events_incident on incident_events (incident_id, id)`,
  // An investigation writes each of its events once, however often its job is retried.
  sql`create unique index incident_events_run_kind on incident_events (incident_id, run_id, kind) where run_id is not null`,
  sql`create table war_rooms (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    incident_id uuid not null unique references incidents(id) on delete cascade,
    session_id text not null references agent_sessions(id),
    created_by uuid references users(id),
    created_at timestamptz not null default now()
  )`,
  sql`create table war_room_participants (
    room_id uuid not null references war_rooms(id) on delete cascade,
    user_id uuid not null references users(id),
    joined_at timestamptz not null default now(),
    primary key (room_id, user_id)
  )`,
  // Sessions and runs bound to an incident: a war room's turns and an investigation see the incident.
  sql`alter table agent_sessions add column incident_id uuid references incidents(id) on delete set null`,
  sql`alter table agent_runs add column incident_id uuid references incidents(id) on delete set null`,
  sql`alter table agent_runs add column purpose text check (purpose is null or purpose in ('investigation'))`,
  sql`create table triage_rules (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    name text not null,
    kind text not null check (kind in ('dedupe', 'suppress', 'correlate', 'route')),
    match jsonb not null default '{}'::jsonb,
    action jsonb not null default '{}'::jsonb,
    enabled boolean not null default true,
    created_at timestamptz not null default now()
  )`,
  // One row per decided alert group: a duplicate within the window adds to count instead of a new row.
  sql`create table triage_events (
    id bigserial primary key,
    tenant_id uuid not null references tenants(id),
    at timestamptz not null default now(),
    source text not null,
    fingerprint text not null,
    title text not null,
    severity text not null,
    arn text,
    action text not null check (action in ('new', 'deduplicated', 'suppressed', 'correlated', 'incident_opened')),
    incident_id uuid references incidents(id) on delete set null,
    count integer not null default 1,
    first_at timestamptz not null,
    last_at timestamptz not null,
    status text not null default 'firing',
    labels jsonb not null default '{}'::jsonb
  )`,
  sql`create index triage_events_recent on triage_events (tenant_id, at desc, id desc)`,
  sql`create index triage_events_fingerprint on triage_events (tenant_id, fingerprint, last_at desc)`,
  sql`create index triage_events_incident on triage_events (incident_id) where incident_id is not null`,
  // Alerts waiting for the triage job (webhook batches), and which inventory alert events were triaged.
  sql`create table triage_inbox (
    id bigserial primary key,
    tenant_id uuid not null references tenants(id),
    batch_id uuid not null,
    alert jsonb not null,
    received_at timestamptz not null default now(),
    event_id bigint references triage_events(id) on delete set null,
    action text,
    processed_at timestamptz
  )`,
  sql`create index triage_inbox_batch on triage_inbox (batch_id, id)`,
  sql`create table triage_refs (
    tenant_id uuid not null references tenants(id),
    ref text not null,
    event_id bigint references triage_events(id) on delete set null,
    primary key (tenant_id, ref)
  )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
