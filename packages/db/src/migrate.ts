import { Migrator, type MigrationResultSet } from 'kysely';
import type { Db } from './client';
import { migrations } from './migrations/index';

function migrator(db: Db) {
  return new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } });
}

/** Applies every pending migration; throws with the failing migration's name and error. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const result: MigrationResultSet = await migrator(db).migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `migration ${failed} failed: ${String((result.error as Error).message ?? result.error)}`,
      {
        cause: result.error,
      },
    );
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of migrations not yet applied. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const all = await migrator(db).getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}
