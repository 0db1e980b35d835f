import { loadConfigOrExit } from '@opsi/config';
import { EmbeddedDatabaseBusyError, openDatabase } from './client';
import { migrateToLatest } from './migrate';

// `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded database).
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
  const applied = await migrateToLatest(handle.db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
} finally {
  await handle.close();
}
