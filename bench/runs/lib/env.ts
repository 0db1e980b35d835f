import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { createPostgresDatabase, migrateToLatest, type Db } from '@opsi/db';
import { testServerUrl } from '@opsi/db/testing';
import { createRedis, type Redis } from '@opsi/redis';
import { freePort } from '@opsi/test-support';
import type { MemorySample } from './agent';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const AGENT_URL = pathToFileURL(fileURLToPath(new URL('./agent.ts', import.meta.url))).href;

/** Scratch databases are named opsi_bench_<unix seconds>_<hex>: never the test suite's opsi_t_ prefix,
 *  whose global setup drops every opsi_t_ database it finds (other suites may run beside us). */
const DB_PREFIX = 'opsi_bench_';

export function redisUrl(): string {
  return process.env.REDIS_URL || 'redis://127.0.0.1:6379';
}

function serverUrl(database: string): string {
  const url = new URL(testServerUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServerUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface Scratch {
  db: Db;
  databaseUrl: string;
  redisUrl: string;
  redis: Redis;
  /** Every key the benchmark writes starts with this. */
  redisPrefix: string;
  close(): Promise<void>;
}

/** A migrated scratch database and a Redis prefix of our own; close() removes both. */
export async function createScratch(): Promise<Scratch> {
  const name = `${DB_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  await withAdmin(async (admin) => {
    // Databases left by a benchmark that was killed more than an hour ago.
    const stale = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1`,
      [`${DB_PREFIX}%`],
    );
    const hourAgo = Date.now() / 1000 - 3600;
    for (const { datname } of stale.rows) {
      const at = Number(datname.slice(DB_PREFIX.length).split('_')[0]);
      if (at < hourAgo) await admin.query(`drop database if exists "${datname}" with (force)`);
    }
    await admin.query(`create database "${name}"`);
  });
  const databaseUrl = serverUrl(name);
  const handle = createPostgresDatabase(databaseUrl, { max: 5, applicationName: 'opsi-bench' });
  await migrateToLatest(handle.db);
  const redisPrefix = `opsi_bench_${randomBytes(5).toString('hex')}`;
  const redis = createRedis(redisUrl(), 'command');
  let closed = false;
  return {
    db: handle.db,
    databaseUrl,
    redisUrl: redisUrl(),
    redis,
    redisPrefix,
    async close() {
      if (closed) return;
      closed = true;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
        if (keys.length) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
      await handle.close();
      await withAdmin((admin) => admin.query(`drop database if exists "${name}" with (force)`));
    },
  };
}

export interface Service {
  name: string;
  child: ChildProcess;
  /** The last 64 KiB of its stdout and stderr. */
  output(): string;
  /** A request to the preloaded agent (./agent.ts) or to the program itself, answered over IPC. */
  request<T>(msg: { type: string; [k: string]: unknown }): Promise<T>;
  memory(): Promise<MemorySample>;
  /** Resolves with the first IPC message of this type that the program sends on its own. */
  waitFor<T>(type: string, timeoutMs?: number): Promise<T>;
  /** Resolves once stdout or stderr has shown `text`. */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<Service>();
const inProcess = new Set<() => void>();

/**
 * Registers something running in this process (a Redis connection under a BullMQ queue or worker) to be
 * cut on an interrupt, before the scratch keys are swept; answers a function that unregisters it.
 */
export function track(stop: () => void): () => void {
  inProcess.add(stop);
  return () => inProcess.delete(stop);
}

/** Cuts everything registered with track(). */
export function stopInProcess(): void {
  for (const stop of inProcess) stop();
  inProcess.clear();
}

/** Every service still running (for cleanup on an interrupt). */
export function liveServices(): Service[] {
  return [...live];
}

/** The environment of a child: ours, less what would point it elsewhere, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const key of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'REDIS_PREFIX', 'NODE_ENV', 'NODE_OPTIONS'])
    delete base[key];
  return { ...base, ...env };
}

/**
 * Starts a TypeScript entry point as its own Node process (tsx loader, --expose-gc, and the IPC agent
 * preloaded). Used for the real API and worker entry points and for the raw baselines' servers.
 */
export function startService(
  name: string,
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Service {
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--expose-gc', '--import', 'tsx', '--import', AGENT_URL, entry],
    {
      cwd: REPO_ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  let output = '';
  const outputWaiters: Array<{ text: string; resolve: () => void }> = [];
  const onOutput = (d: Buffer) => {
    output = (output + d.toString('utf8')).slice(-65_536);
    for (const w of [...outputWaiters]) {
      if (output.includes(w.text)) {
        outputWaiters.splice(outputWaiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const typeWaiters = new Map<string, (v: unknown) => void>();
  child.on('message', (msg: { id?: number; type?: string; value?: unknown; error?: string }) => {
    if (typeof msg.id === 'number' && pending.has(msg.id)) {
      const p = pending.get(msg.id)!;
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`${name}: ${msg.error}`));
      else p.resolve(msg.value);
    } else if (msg.type && typeWaiters.has(msg.type)) {
      typeWaiters.get(msg.type)!(msg);
      typeWaiters.delete(msg.type);
    }
  });
  const exited = once(child, 'exit');
  const failIfExited = <T>(p: Promise<T>, timeoutMs: number, what: string) =>
    Promise.race([
      p,
      exited.then(() => {
        throw new Error(`${name} exited (${child.exitCode}) while waiting for ${what}:\n${output}`);
      }),
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${name}: no ${what} within ${timeoutMs} ms:\n${output}`)),
          timeoutMs,
        ).unref(),
      ),
    ]);
  const service: Service = {
    name,
    child,
    output: () => output,
    request<T>(msg: { type: string; [k: string]: unknown }) {
      const id = nextId++;
      const answer = new Promise<T>((resolve, reject) =>
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject }),
      );
      child.send({ ...msg, id });
      return failIfExited(answer, 60_000, `an answer to ${msg.type}`);
    },
    memory() {
      return service.request<MemorySample>({ type: 'mem' });
    },
    waitFor<T>(type: string, timeoutMs = 60_000) {
      return failIfExited(
        new Promise<T>((r) => typeWaiters.set(type, r as (v: unknown) => void)),
        timeoutMs,
        type,
      );
    },
    waitForOutput(text: string, timeoutMs = 60_000) {
      if (output.includes(text)) return Promise.resolve();
      return failIfExited(
        new Promise<void>((resolve) => outputWaiters.push({ text, resolve })),
        timeoutMs,
        JSON.stringify(text),
      );
    },
    async stop(graceMs = 15_000) {
      live.delete(service);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
  live.add(service);
  return service;
}

/** Polls GET /readyz until it answers 200. */
export async function waitReady(url: string, service: Service, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.child.exitCode !== null)
      throw new Error(`${service.name} exited before ready:\n${service.output()}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${service.name} not ready:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The real API and worker entry points as their own processes on the scratch database and Redis prefix
 * (on a free port, demo seeding off, the worker's metrics on any port), with `env` over those settings;
 * answers once both are ready.
 */
export async function startApiAndWorker(
  s: Scratch,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<{ api: Service; worker: Service; url: string }> {
  const port = await freePort();
  const all = {
    DATABASE_URL: s.databaseUrl,
    REDIS_URL: s.redisUrl,
    REDIS_PREFIX: s.redisPrefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    DEMO_SEED: 'false',
    WORKER_METRICS_PORT: '0',
    ...env,
  };
  const api = startService('api', 'apps/api/src/main.ts', all, nodeArgs);
  const worker = startService('worker', 'apps/worker/src/main.ts', all, nodeArgs);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, api);
  await worker.waitForOutput('worker ready');
  return { api, worker, url };
}
