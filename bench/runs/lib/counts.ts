import { sql } from '@opsi/db';
import type { Scratch } from './env';

export interface ServerCounts {
  /** Transactions committed in the scratch database (a statement outside a transaction is one). */
  statements: number;
  /** Commands the Redis server processed, all clients (commands run inside Lua scripts included). */
  commands: number;
}

/**
 * Totals of what the servers did, or, given earlier totals, the difference. Both are server-wide
 * counters: read them around a measurement during which nothing else uses the scratch database, and
 * nothing else (or little) uses the Redis server.
 */
export async function serverCounts(s: Scratch, since?: ServerCounts): Promise<ServerCounts> {
  const database = new URL(s.databaseUrl).pathname.slice(1);
  const { rows } = await sql<{
    n: number;
  }>`select xact_commit::int as n from pg_stat_database where datname = ${database}`.execute(s.db);
  const commands = Number(/total_commands_processed:(\d+)/.exec(await s.redis.info('stats'))?.[1] ?? 0);
  const now = { statements: rows[0]?.n ?? 0, commands };
  return since
    ? { statements: now.statements - since.statements, commands: now.commands - since.commands }
    : now;
}
