import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes';

// Dependencies of a drill's own: a Postgres cluster and a Redis server started on free ports in a temp
// directory, so a drill may stop and restart them. Never the machine's shared servers.

const run = promisify(execFile);

/** Where Postgres's server binaries are: PG_BIN, or Debian's layout for Postgres 15. */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** Why drills cannot run here, or undefined when they can. */
export function drillsUnavailable(): string | undefined {
  if (!existsSync(join(PG_BIN, 'pg_ctl'))) return `no pg_ctl in ${PG_BIN} (set PG_BIN)`;
  if (!existsSync(REDIS_SERVER)) return `no redis-server at ${REDIS_SERVER} (set REDIS_SERVER)`;
  return undefined;
}

/** Postgres refuses to run as root: as root, its commands run as the `postgres` user. */
async function asPostgresUser(command: string, args: string[]) {
  const root = process.getuid?.() === 0;
  const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  // pg_ctl daemonizes the server (its parent becomes init): without this, a server started from a
  // process marked as a test service would look like an orphaned one, and any test run's teardown on
  // the machine would SIGKILL it mid-drill (vitest.global-setup.ts).
  const env = { ...process.env };
  delete env.OPSI_TEST_SERVICE;
  return run(file, argv, { timeout: 60_000, env });
}

export interface DrillPostgres {
  url(database?: string): string;
  port: number;
  /** Stops the server (fast: open connections are cut, as a restart cuts them). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops and removes the cluster. */
  destroy(): Promise<void>;
}

/** A throwaway Postgres cluster on a free port, trust authentication, user postgres. */
export async function startDrillPostgres(): Promise<DrillPostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'opsi-drill-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  await asPostgresUser(join(PG_BIN, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const pgCtl = (...args: string[]) =>
    asPostgresUser(join(PG_BIN, 'pg_ctl'), ['-D', data, '-l', join(dir, 'log'), '-o', options, ...args]);
  await pgCtl('-w', 'start');
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () => pgCtl('-w', '-m', 'fast', 'stop').then(() => undefined),
    start: () => pgCtl('-w', 'start').then(() => undefined),
    async destroy() {
      await pgCtl('-w', '-m', 'immediate', 'stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface DrillRedis {
  url: string;
  /** Kills the server (SIGKILL); with no persistence, everything it held is gone. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /**
   * Turns the append-only file on (appendfsync always: every write is on disk before its reply) or
   * off, on the running server and for later starts. With it on, a killed server comes back with
   * everything it had acknowledged.
   */
  setAof(on: boolean): Promise<void>;
  destroy(): Promise<void>;
}

/** A throwaway redis-server on a free port, without persistence (no RDB, no AOF) unless `aof`. */
export async function startDrillRedis(opts: { aof?: boolean } = {}): Promise<DrillRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'opsi-drill-redis-'));
  let aof = opts.aof ?? false;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      REDIS_SERVER,
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir],
        ...['--appendonly', aof ? 'yes' : 'no', '--appendfsync', 'always'],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    for (let i = 0; !output.includes('Ready to accept connections'); i++) {
      if (child.exitCode !== null) throw new Error(`redis-server exited:\n${output}`);
      if (i > 200) throw new Error(`redis-server not ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  const url = `redis://127.0.0.1:${port}`;
  const setAof = async (on: boolean) => {
    const { createRedis } = await import('@opsi/redis');
    const client = createRedis(url, 'command');
    try {
      await client.config('SET', 'appendonly', on ? 'yes' : 'no');
      // Turning it on writes the file from the dataset in the background: wait until it is written.
      for (let i = 0; on; i++) {
        const info = await client.info('persistence');
        if (/aof_rewrite_in_progress:0/.test(info) && /aof_rewrite_scheduled:0/.test(info)) break;
        if (i > 600) throw new Error('Redis AOF rewrite did not finish');
        await new Promise((r) => setTimeout(r, 100));
      }
      aof = on;
    } finally {
      client.disconnect();
    }
  };
  await start();
  return {
    url,
    kill,
    start,
    setAof,
    async destroy() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The drills' polling helper is the shared one (./poll), also exported from the support index. */
export { until } from './poll';

/** Writes 64 KB values until Redis (at maxmemory, noeviction) refuses one. */
export async function fillUp(redis: { set(key: string, value: string): Promise<unknown> }) {
  for (let i = 0; i < 10_000; i++) {
    const refused = await redis.set(`filler:${i}`, 'x'.repeat(64 * 1024)).then(
      () => false,
      (e: Error) => /^OOM/.test(e.message),
    );
    if (refused) return;
  }
  throw new Error('Redis never refused a write');
}
