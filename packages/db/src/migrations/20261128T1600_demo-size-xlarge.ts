import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/** The demo's `xlarge` size: a whale tenant of about 1,000,000 resources (issue 30). */
const statements = [
  sql`alter table demo_environments drop constraint demo_environments_size_check`,
  sql`alter table demo_environments add constraint demo_environments_size_check
    check (size in ('small', 'medium', 'large', 'xlarge'))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const s of statements) await s.execute(db);
}
