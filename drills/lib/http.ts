import { sql } from '@opsi/db';
import type { Stack } from '../../test/support/stack';

/** fetch with a bound; answers the status and text, or status -1 and the error when no answer came. */
export async function request(
  url: string,
  init: RequestInit & { timeoutMs?: number } = {},
): Promise<{ status: number; text: string; headers?: Headers }> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 30_000) });
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream')) {
      await res.body?.cancel();
      return { status: res.status, text: '', headers: res.headers };
    }
    return { status: res.status, text: await res.text(), headers: res.headers };
  } catch (e) {
    return { status: -1, text: String(e) };
  }
}

/** Percentile (0..100) of numbers, nearest rank; NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const countSql = new WeakMap<Stack, string>();

/** Row counts of every table with a tenant_id, for one tenant (what a refused request must not change). */
export async function tenantRowCounts(stack: Stack, tenantId: string): Promise<Record<string, number>> {
  let query = countSql.get(stack);
  if (!query) {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.columns
       where table_schema = 'public' and column_name = 'tenant_id' order by table_name`.execute(
      stack.database.db,
    );
    query = tables.rows
      .map(
        (r) =>
          `select '${r.table_name}' as t, count(*)::int as n from "${r.table_name}" where tenant_id = $1`,
      )
      .join(' union all ');
    countSql.set(stack, query);
  }
  if (!/^[0-9a-f-]{36}$/.test(tenantId)) throw new Error(`not a tenant id: ${tenantId}`);
  const { rows } = await sql
    .raw<{ t: string; n: number }>(query.replaceAll('$1', `'${tenantId}'`))
    .execute(stack.database.db);
  return Object.fromEntries(rows.map((r) => [r.t, r.n]));
}

/** Waits until none of the tenant's agent runs is queued or running (bounded). */
export async function runsSettled(stack: Stack, tenantId: string, boundMs = 120_000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    const open = await stack.database.db
      .selectFrom('agent_runs')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    if (!open) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a process of the stack is still running. */
export const alive = (p: { child: { exitCode: number | null; signalCode: NodeJS.Signals | null } }) =>
  p.child.exitCode === null && p.child.signalCode === null;

/** Kills the stack's workers with SIGKILL and starts as many new ones in their place. */
export async function killAndReplaceWorkers(stack: Stack, which = stack.workers.slice()): Promise<number> {
  const killedAt = Date.now();
  await Promise.all(
    which.map(async (w) => {
      w.child.kill('SIGKILL');
      await w.exited;
    }),
  );
  for (const w of which) forgetWorker(stack, w);
  await Promise.all(which.map(() => stack.startWorker()));
  return killedAt;
}

/** Takes a worker that has exited (or is being stopped) out of the stack's lists. */
function forgetWorker(stack: Stack, w: Stack['workers'][number]): void {
  if (stack.workers.includes(w)) stack.workers.splice(stack.workers.indexOf(w), 1);
  if (stack.processes.includes(w)) stack.processes.splice(stack.processes.indexOf(w), 1);
}

/**
 * Stops one of the stack's workers as an orchestrator scales a pool down: SIGTERM (it drains within
 * WORKER_SHUTDOWN_GRACE_MS), SIGKILL only after `graceMs`; answers its exit code (0 when it drained).
 */
export async function retireWorker(stack: Stack, w: Stack['workers'][number], graceMs: number) {
  const code = await w.stop(graceMs);
  forgetWorker(stack, w);
  return code;
}
