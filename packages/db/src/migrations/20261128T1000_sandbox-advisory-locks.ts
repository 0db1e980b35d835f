import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/**
 * The sandbox role (opsi_sandbox, which re-runs findings' queries) could call the advisory-lock
 * functions, which every role may by default: a session lock taken there outlives the re-run's
 * transaction on a pooled connection, and could block another tenant's work that takes the same key.
 * The whole family (session and transaction, shared, try, unlock) is revoked from PUBLIC and granted
 * back to the role that runs the migrations (the service's own), as set_config was in the pulse
 * migration. And the service's role is allowed to set temp_file_limit (a superuser-only setting) per
 * re-run when a superuser runs this; otherwise the sandbox sets only work_mem.
 */
const statements = [
  sql`do $$
  declare f regprocedure;
  begin
    for f in
      select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'pg_catalog' and p.proname like 'pg\\_%advisory%'
    loop
      execute format('revoke execute on function %s from public', f);
      execute format('grant execute on function %s to %I', f, current_user);
    end loop;
  end $$`,
  sql`do $$ begin
    if current_setting('server_version_num')::int >= 150000 then
      execute format('grant set on parameter temp_file_limit to %I', current_user);
    end if;
  exception when others then null;
  end $$`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const s of statements) await s.execute(db);
}
