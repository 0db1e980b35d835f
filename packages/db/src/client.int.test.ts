import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'kysely';
import { createTestDatabase, testServerUrl, type TestDatabase } from './testing';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

/** Ends one backend from another connection, as a Postgres restart ends every backend. */
async function terminateBackend(pid: number) {
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    await admin.query('select pg_terminate_backend($1)', [pid]);
  } finally {
    await admin.end();
  }
}

describe('a connection that breaks while checked out of the pool', () => {
  it('fails its own work only: no unhandled error event, and the next query runs on a new connection', async () => {
    let unhandled: unknown;
    const onUncaught = (err: unknown) => (unhandled = err);
    process.on('uncaughtException', onUncaught);
    try {
      const failed = await database.db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // The transaction's client is checked out and idle between two queries when its backend dies.
          await terminateBackend(rows[0]!.pid);
          await new Promise((r) => setTimeout(r, 200));
          await sql`select 1`.execute(trx);
        })
        .then(
          () => undefined,
          (e: Error) => e,
        );
      expect(failed).toBeInstanceOf(Error);
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      expect(rows).toEqual([{ one: 1 }]);
      expect(unhandled).toBeUndefined();
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
