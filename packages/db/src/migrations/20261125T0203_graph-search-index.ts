import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

// The search index of 20261125T0200 was built on jsonb_path_query_array(tags, '$.*') (tag values only),
// and the planner never matched GET /graph/search's expression to it, even written with the same
// arguments: every search was a sequential scan (measured with EXPLAIN on the medium demo: 31 ms against
// 0.06 ms). Tags as their JSON text (keys and values) are matched: this index replaces it.
const statements = [
  sql`drop index if exists resources_search_trgm`,
  sql`create index resources_search_trgm on resources using gin (
    (lower(arn || ' ' || native_id || ' ' || coalesce(name, '') || ' ' || tags::text)) gin_trgm_ops
  ) where deleted_at is null`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
