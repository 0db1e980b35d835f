import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** bench/runs' IPC agent: memory after full GCs, V8 CPU profiles on request (see its header). */
const AGENT_URL = pathToFileURL(fileURLToPath(new URL('../../runs/lib/agent.ts', import.meta.url))).href;

export interface Service {
  name: string;
  child: ChildProcess;
  /** The tail of its output (read from its log file). */
  output(bytes?: number): string;
  /** A request to the preloaded agent, answered over IPC. */
  request<T>(msg: { type: string; [k: string]: unknown }): Promise<T>;
  /** The first IPC message of this type that the program sends on its own. */
  waitFor<T>(type: string, timeoutMs?: number): Promise<T>;
  /** SIGTERM, then SIGKILL after `graceMs`; removes the log file. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<Service>();

/** Every service still running (for cleanup on an interrupt). */
export function liveServices(): Service[] {
  return [...live];
}

/** Our environment, less what would point a child elsewhere, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const key of [
    'DATABASE_URL',
    'REDIS_URL',
    'PORT',
    'HOST',
    'REDIS_PREFIX',
    'NODE_ENV',
    'NODE_OPTIONS',
    'LOG_LEVEL',
  ])
    delete base[key];
  return { ...base, ...env };
}

/**
 * Starts a TypeScript entry point as its own Node process (tsx loader, the IPC agent preloaded). Its
 * stdout and stderr go to a file, as a production process's would go to its log collector: the API
 * writes one log line per request, and reading that through a pipe in this process (the load
 * generator) would cost the client CPU on one side only.
 */
export function startService(name: string, entry: string, env: Record<string, string>): Service {
  const logPath = join(os.tmpdir(), `opsi-bench-pulse-${name}-${process.pid}.log`);
  const fd = openSync(logPath, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', AGENT_URL, entry], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ['ignore', fd, fd, 'ipc'],
  });
  closeSync(fd);
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
  const output = (bytes = 4096) => {
    try {
      return readFileSync(logPath, 'utf8').slice(-bytes);
    } catch {
      return '';
    }
  };
  const guarded = <T>(p: Promise<T>, timeoutMs: number, what: string) =>
    Promise.race([
      p,
      exited.then(() => {
        throw new Error(`${name} exited (${child.exitCode}) while waiting for ${what}:\n${output()}`);
      }),
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${name}: no ${what} within ${timeoutMs} ms:\n${output()}`)),
          timeoutMs,
        ).unref(),
      ),
    ]);
  const service: Service = {
    name,
    child,
    output,
    request<T>(msg: { type: string; [k: string]: unknown }) {
      const id = nextId++;
      const answer = new Promise<T>((resolve, reject) =>
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject }),
      );
      child.send({ ...msg, id });
      return guarded(answer, 60_000, `an answer to ${msg.type}`);
    },
    waitFor<T>(type: string, timeoutMs = 60_000) {
      return guarded(
        new Promise<T>((r) => typeWaiters.set(type, r as (v: unknown) => void)),
        timeoutMs,
        type,
      );
    },
    async stop(graceMs = 10_000) {
      live.delete(service);
      if (child.exitCode === null && child.signalCode === null) {
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(timer);
      }
      rmSync(logPath, { force: true });
    },
  };
  live.add(service);
  return service;
}

/** Polls GET `url` until it answers 200. */
export async function waitReady(url: string, service: Service, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.child.exitCode !== null)
      throw new Error(`${service.name} exited before ready:\n${service.output()}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${service.name} not ready:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
