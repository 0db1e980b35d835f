import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository root, where `npm start` and `npm run admin` run. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * The environment a child process gets: this one's, less the settings that would point it elsewhere
 * (so an embedded-mode test is embedded even where DATABASE_URL or REDIS_URL is set), plus `env`.
 */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const key of [
    'DATABASE_URL',
    'REDIS_URL',
    'REDIS_CLUSTER',
    'PORT',
    'HOST',
    'DATA_DIR',
    'PUBLIC_URL',
    'REDIS_PREFIX',
    'NODE_ENV',
  ]) {
    delete base[key];
  }
  const merged: NodeJS.ProcessEnv = { ...base };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) merged[k] = v;
  return merged;
}

export interface ServiceProcess {
  /** The service's own Node process (no wrapper in between), so signals reach it as sent. */
  child: ChildProcess;
  url: string;
  output(): string;
  /** Settles with the exit code (null when a signal ended it) once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; answers the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts an app entry point (default: apps/standalone, what `npm start` runs) as a real process and
 * waits until GET /readyz answers 200, or `readyUrl` when given (a worker serves only /healthz, on
 * WORKER_METRICS_PORT). A TypeScript entry runs as `node --import tsx <entry>`, not under the tsx CLI:
 * the CLI is a parent process that relays SIGTERM but not SIGKILL, so killing it would orphan the
 * service. A JavaScript entry (a compiled `dist/main.js`, see scripts/build.mjs) runs as plain node.
 */
export async function startService(
  env: Record<string, string | undefined>,
  opts: { entry?: string; readyTimeoutMs?: number; readyUrl?: string } = {},
): Promise<ServiceProcess> {
  const port = Number(env.PORT ?? (await freePort()));
  const entry = opts.entry ?? 'apps/standalone/src/main.ts';
  const args = entry.endsWith('.ts') ? ['--import', 'tsx', entry] : ['--enable-source-maps', entry];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    // OPSI_TEST_SERVICE: the test teardown kills any left orphaned (vitest.global-setup.ts).
    env: childEnv({ LOG_LEVEL: 'warn', ...env, PORT: String(port), OPSI_TEST_SERVICE: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const readyUrl = opts.readyUrl ?? `${url}/readyz`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 90_000);
  let lastAnswer = 'no answer';
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`service exited with ${child.exitCode ?? child.signalCode} before ready:\n${output}`);
    try {
      const res = await fetch(readyUrl);
      if (res.status === 200) break;
      lastAnswer = `${res.status} ${await res.text()}`;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service not ready at ${readyUrl} within the bound (${lastAnswer}):\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    child,
    url,
    output: () => output,
    exited,
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Runs `npm run admin -- <args> --json` as the operator would; answers the exit code and parsed JSON.
 * Like startService it runs `node --import tsx` (no CLI wrapper), so a command still alive after
 * `timeoutMs` is SIGKILLed itself; `timedOut` then says the command did not exit by itself.
 */
export async function runAdmin(
  args: string[],
  env: Record<string, string | undefined>,
  opts: { timeoutMs?: number } = {},
) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/admin/src/main.ts', ...args, '--json'], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += String(d)));
  child.stderr!.on('data', (d) => (stderr += String(d)));
  let timedOut = false;
  const timer = opts.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, opts.timeoutMs)
    : undefined;
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  let json: Record<string, any> | undefined;
  try {
    json = JSON.parse(stdout.trim().split('\n').pop() ?? '');
  } catch {
    json = undefined;
  }
  return { code, json, stdout, stderr, timedOut };
}
