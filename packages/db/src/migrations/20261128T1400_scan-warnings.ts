import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

/**
 * A scan that could not read everything (an AWS call refused for permissions, a region not enabled)
 * completes as partial: `partial` says so and `warnings` lists each refused call as
 * {service, action, region, code, message}.
 */
const statements = [
  sql`alter table inventory_scans add column partial boolean not null default false`,
  sql`alter table inventory_scans add column warnings jsonb not null default '[]'::jsonb`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const s of statements) await s.execute(db);
}
