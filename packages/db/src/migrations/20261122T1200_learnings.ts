import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/** Taught facts (learnings): what the team knows about its services, read by the agent on every turn. */
const statements = [
  sql`create table learnings (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    fact text not null check (char_length(fact) between 1 and 2000),
    service text check (service is null or char_length(service) between 1 and 128),
    status text not null default 'active' check (status in ('active', 'archived')),
    created_by text not null,
    created_at timestamptz not null default now()
  )`,
  sql`create index learnings_tenant on learnings (tenant_id, status, created_at desc)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
