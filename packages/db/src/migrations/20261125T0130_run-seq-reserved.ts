import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

// A run's events are numbered in its Redis stream. A Redis restart without persistence loses the
// stream, and numbering must continue above every seq a client may have seen. The worker reserves
// seqs in blocks here before it uses them, so this column is never below any seq ever handed out;
// a writer that finds the stream gone continues above it (a gap, which is the truth: events were lost).
const statements = [sql`alter table agent_runs add column seq_reserved integer not null default 0`];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
}
