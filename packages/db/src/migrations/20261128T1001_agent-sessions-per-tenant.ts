import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/**
 * Agent sessions are keyed by tenant and id, and runs, messages and war rooms reference their session by
 * (tenant_id, session_id), so no row can point at another tenant's session. Session ids may be chosen
 * by the client; one another tenant holds is still refused (404, as decided), found by the index on id.
 */
const statements = [
  sql`alter table agent_runs drop constraint agent_runs_session_id_fkey`,
  sql`alter table agent_messages drop constraint agent_messages_session_id_fkey`,
  sql`alter table war_rooms drop constraint war_rooms_session_id_fkey`,
  sql`alter table agent_sessions drop constraint agent_sessions_pkey`,
  sql`alter table agent_sessions add constraint agent_sessions_pkey primary key (tenant_id, id)`,
  sql`alter table agent_runs add constraint agent_runs_session_fkey foreign key (tenant_id, session_id)
    references agent_sessions (tenant_id, id) on delete cascade`,
  sql`alter table agent_messages add constraint agent_messages_session_fkey foreign key (tenant_id, session_id)
    references agent_sessions (tenant_id, id) on delete cascade`,
  sql`alter table war_rooms add constraint war_rooms_session_fkey foreign key (tenant_id, session_id)
    references agent_sessions (tenant_id, id)`,
  sql`drop index agent_runs_session`,
  sql`create index agent_runs_session on agent_runs (tenant_id, session_id, created_at desc)`,
  sql`drop index agent_messages_session`,
  sql`create index agent_messages_session on agent_messages (tenant_id, session_id, created_at)`,
  sql`create index agent_sessions_id on agent_sessions (id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
