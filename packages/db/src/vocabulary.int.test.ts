import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { FINDING_STATUSES, INCIDENT_STATUSES, SEVERITIES } from '@opsi/contracts';
import { createTestDatabase, type TestDatabase } from './testing';
import { activeFindingStatuses } from './vocabulary';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

/** The quoted values of a column's `check (col in (...))` constraint, as the migrated schema has it. */
async function checked(table: string, column: string): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    select pg_get_constraintdef(c.oid) as def from pg_constraint c
    join pg_class t on t.oid = c.conrelid
    where t.relname = ${table} and c.contype = 'c' and pg_get_constraintdef(c.oid) like ${`%(${column} = %`}`.execute(
    database.db,
  );
  expect(rows, `${table}.${column} has a check constraint`).toHaveLength(1);
  return [...rows[0]!.def.matchAll(/'([^']+)'::text/g)].map((m) => m[1]!);
}

describe('the vocabulary and the schema agree', () => {
  it('findings.status, findings.severity and incidents.status allow exactly the vocabulary', async () => {
    expect((await checked('findings', 'status')).sort()).toEqual([...FINDING_STATUSES].sort());
    expect((await checked('findings', 'severity')).sort()).toEqual([...SEVERITIES].sort());
    expect((await checked('incidents', 'status')).sort()).toEqual([...INCIDENT_STATUSES].sort());
  });

  it('the SQL list of active statuses reads as the literals it replaced', () => {
    expect(sql`f.status in ${activeFindingStatuses}`.compile(database.db).sql).toBe(
      "f.status in ('open', 'acknowledged', 'in_progress')",
    );
  });
});
