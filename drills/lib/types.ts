import type { Stack } from '../../test/support/stack';

// The interface every drill implements. Stable: drills written by other branches (e.g. the fairness
// drill) build against it. Add fields; never rename or remove one.

/** One measured figure of a drill: a line of the printed table and of docs/reliability.md. */
export interface DrillRow {
  /** The drill's name (the module's `drill.name`). */
  drill: string;
  /** What was measured, e.g. "runs with exactly one terminal event". */
  measure: string;
  /** The raw figure: a count, milliseconds, or a short text such as "100/100". */
  value: number | string;
  /** The target in words, e.g. "100/100", "0", "≤ 2000 ms p99". */
  target: string;
  /** Whether `value` meets `target`. Any false row makes `npm run drills` exit non-zero. */
  pass: boolean;
}

/** A tenant of the drill's own, with one owner and a token of each kind. */
export interface DrillTenant {
  id: string;
  slug: string;
  name: string;
  userId: string;
  email: string;
  password: string;
  /** Bearer tokens by scope. */
  tokens: { read: string; read_write: string };
  /** Their ids (for DELETE /api/v1/tokens/{id}). */
  tokenIds: { read: string; read_write: string };
  /** A browser session (cookie + CSRF token) signed in over HTTP. */
  session: { cookie: string; csrf: string };
}

export interface DrillContext {
  /**
   * The stack the runner started: its own Postgres and Redis on free ports; API x2, worker x2 and a
   * scheduler as separate processes. `stack.apis[i].url` is an API's base URL.
   */
  stack: Stack;
  /** `--quick`: the small, fast variant (counts scaled down; used by the e2e test). */
  quick: boolean;
  /** `n` at full scale, `quickN` in quick mode. */
  scale(n: number, quickN: number): number;
  /** A fresh tenant (owner user, read and read_write tokens, a signed-in session). */
  newTenant(opts?: { budget?: number }): Promise<DrillTenant>;
  /** Progress on stderr (the table goes to stdout). */
  log(message: string): void;
  /** Aborted when the drill's time bound passes; long loops should stop on it. */
  signal: AbortSignal;
}

export interface Drill {
  /** Short, stable name: the first column of the table (e.g. "sigkill", "fairness"). */
  name: string;
  /** One line saying what the drill does (printed before it runs). */
  description?: string;
  /** Upper bound on the drill's wall time in ms (default 240 000 full, 90 000 quick). */
  timeoutMs?: number;
  /**
   * Runs the drill against the shared stack and answers its figures. Leave the stack as found:
   * restart what you stop, and do not leave runs streaming. Throwing counts as a failed row.
   */
  run(ctx: DrillContext): Promise<DrillRow[]>;
}
