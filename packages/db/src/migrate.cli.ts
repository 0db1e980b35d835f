import { loadConfigOrExit } from '@opsi/config';
import { EmbeddedDatabaseBusyError, openDatabase } from './client';
import { migrateToLatest, pendingMigrations } from './migrate';

// `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded database).
// `--check` applies nothing: exit 0 when none is pending, 3 (with their names) when some are. Kubernetes
// pods wait on it in an init container until the migration Job has run (deploy/kubernetes).
const config = loadConfigOrExit();
let handle;
try {
  handle = await openDatabase(config, 'opsi-migrate');
} catch (e) {
  if (!(e instanceof EmbeddedDatabaseBusyError)) throw e;
  console.error(e.message);
  process.exit(2);
}
try {
  if (process.argv.includes('--check')) {
    const pending = await pendingMigrations(handle.db);
    console.log(pending.length ? `pending: ${pending.join(', ')}` : 'database is up to date');
    if (pending.length) process.exitCode = 3;
  } else {
    const applied = await migrateToLatest(handle.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  }
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
} finally {
  await handle.close();
}
