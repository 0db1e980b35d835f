import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

// A tenant's Terraform connection reads several states (workspaces, S3 backends), each at every scan.
// One row per state: where it is read from, and what its last read found (serial, lineage, counts by
// what was left out) or why it failed, for the connection views. The state itself is never stored.
const statements = [
  sql`create table terraform_states (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    connection_id uuid not null references cloud_connections(id) on delete cascade,
    source text not null,
    config jsonb not null,
    format text,
    format_version text,
    terraform_version text,
    serial bigint,
    lineage text,
    etag text,
    last_modified timestamptz,
    last_read_at timestamptz,
    last_error text,
    last_error_at timestamptz,
    managed_count integer,
    resource_count integer,
    tainted_count integer,
    unsupported_by_type jsonb not null default '{}'::jsonb,
    skipped_by_reason jsonb not null default '{}'::jsonb,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    unique (tenant_id, source)
  )`,
  sql`create index terraform_states_connection on terraform_states (connection_id, created_at)`,
  // Connections made before: their file becomes their one state, read at each scan from now on, and
  // the copy of the state kept in the config (secrets included) goes.
  sql`insert into terraform_states (tenant_id, connection_id, source, config)
    select tenant_id, id, config->>'file', jsonb_build_object('kind', 'file', 'path', config->>'file')
    from cloud_connections where kind = 'terraform_state' and config ? 'file'`,
  sql`update cloud_connections set config = '{}'::jsonb where kind = 'terraform_state'`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
