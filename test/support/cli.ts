import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { REPO_ROOT, childEnv } from './processes';

export interface CliRun {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Settles once the process exited: its exit code and output. */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * Starts the `opsi` command as a user runs it (`node apps/cli/bin/opsi.js …`), with a clean environment:
 * no OPSI_* settings leak in from the test's own, no colour unless asked.
 */
export function startCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  stdin?: string | Buffer,
): CliRun {
  const base = childEnv({});
  for (const key of ['OPSI_URL', 'OPSI_TOKEN', 'OPSI_CONFIG_DIR', 'FORCE_COLOR']) delete base[key];
  const child = spawn(process.execPath, ['apps/cli/bin/opsi.js', ...args], {
    cwd: REPO_ROOT,
    env: {
      ...base,
      NO_COLOR: '1',
      ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)),
    },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += String(d)));
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const done = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs `opsi` to its end; with --json among the args, `json` is the last line parsed. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  stdin?: string | Buffer,
) {
  const result = await startCli(args, env, stdin).done;
  let json: any;
  try {
    json = JSON.parse(result.stdout.trim().split('\n').pop() ?? '');
  } catch {
    json = undefined;
  }
  return { ...result, json };
}
