import { MessageChannel } from 'node:worker_threads';
import Piscina from 'piscina';
import { AppError, PayloadTooLarge } from '../errors';
import type { ParseTask, WorkerAnswer } from './parse.worker';
import type { ParsedPlan } from './plan';

/**
 * Plans are parsed on a worker thread (piscina), not on the API's event loop (issue 24): a plan is up
 * to 10 MiB, and however linear the parsers are, reading one is CPU work that would stall every other
 * request of the process meanwhile. Each parse has a time limit (past it the worker is terminated:
 * 422) and the worker a heap limit (`resourceLimits`; past it V8 stops the worker: 413); a new worker
 * takes its place.
 */
export interface ParseLimits {
  /** Milliseconds one parse may take (PLAN_PARSE_TIMEOUT_MS). */
  timeoutMs: number;
  /** The parser thread's heap, MB (PLAN_PARSE_MEMORY_MB). */
  memoryMb: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { timeoutMs: 10_000, memoryMb: 512 };

export class Unprocessable extends AppError {
  constructor(detail: string) {
    super(422, detail);
  }
}

/** The task module: the compiled one beside a bundled app (apps/<app>/dist/main.js), else the sources. */
function taskFile(): string {
  const here = import.meta.url;
  return here.endsWith('.ts')
    ? new URL('./parse-worker-boot.mjs', here).href
    : new URL('../../../packages/core/dist/parse.worker.js', here).href;
}

const pools = new Map<string, Piscina>();

function poolFor(limits: ParseLimits): Piscina {
  const key = `${limits.memoryMb}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new Piscina({
      filename: taskFile(),
      minThreads: 0,
      // Two parses at once at most: the machine's other work keeps the remaining cores.
      maxThreads: 2,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb, maxYoungGenerationSizeMb: 32 },
    });
    pools.set(key, pool);
  }
  return pool;
}

/** parsePlan on a worker thread, within `limits`; its 400s as they are. */
export async function parsePlanOffThread(
  input: string,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): Promise<ParsedPlan> {
  const pool = poolFor(limits);
  const abort = new AbortController();
  // The limit counts from the moment the thread begins this parse: not a new thread's start (seconds
  // for a cold one on a busy machine), nor the wait behind other plans for a free thread.
  const { port1, port2 } = new MessageChannel();
  let timer: NodeJS.Timeout | undefined;
  port1.once('message', () => {
    timer = setTimeout(() => abort.abort(), limits.timeoutMs);
  });
  const task: ParseTask = { input, started: port2 };
  let answer: WorkerAnswer;
  try {
    answer = (await pool.run(task, {
      name: 'parseTask',
      signal: abort.signal,
      transferList: [port2],
    })) as WorkerAnswer;
  } catch (e) {
    if (abort.signal.aborted)
      throw new Unprocessable(
        `reading the plan took longer than the limit of ${limits.timeoutMs} ms (PLAN_PARSE_TIMEOUT_MS); it was stopped.`,
      );
    if ((e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory/i.test(String(e)))
      throw new PayloadTooLarge(
        `reading the plan needs more than the limit of ${limits.memoryMb} MB of memory (PLAN_PARSE_MEMORY_MB).`,
      );
    throw e;
  } finally {
    clearTimeout(timer);
    port1.close();
  }
  if ('error' in answer) throw new AppError(answer.error.status, answer.error.detail);
  return answer.plan;
}

/** Stops the parser threads (a process's shutdown; tests). */
export async function closeParsePools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close({ force: true })));
}
