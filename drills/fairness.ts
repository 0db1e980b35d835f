import { setMaxListeners } from 'node:events';

// The fairness drill: tenant A floods the agent queue with turns; tenant B's turns must still start
// (their first event, run.started, written by a worker) within 2 s p99. Written against the Drill
// interface of drills/lib/types.ts; the context it needs is spelled out structurally below so the
// drill also runs on its own (see measureFairness).

/** The part of DrillContext this drill uses. */
export interface FairnessContext {
  stack: { apis: Array<{ url: string }> };
  scale(n: number, quickN: number): number;
  newTenant(opts?: { budget?: number }): Promise<{ tokens: { read_write: string } }>;
  log(message: string): void;
  signal: AbortSignal;
}

export interface FairnessRow {
  drill: string;
  measure: string;
  value: number | string;
  target: string;
  pass: boolean;
}

export interface FairnessOptions {
  /** Turns tenant A enqueues (2,000 at full scale). */
  flood: number;
  /** Turns tenant B asks while A's flood waits. */
  probes: number;
  /** How long each of A's turns works in the worker (the scripted engine sleeps), in ms. */
  turnMs: number;
  /** Concurrent requests A's flood is sent with. */
  senders: number;
  /** Tenant B sends one turn every this many ms. */
  probeEveryMs: number;
}

const TARGET_MS = 2000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Opens /api/v1/stream for a prompt and reads until the first event (or, with `untilFirst` false,
 * only until the response head: the run is durable and goes on without the client). Answers the
 * status, the run id and the milliseconds from the request to the first event.
 */
async function ask(
  base: string,
  token: string,
  prompt: string,
  untilFirst: boolean,
  signal: AbortSignal,
): Promise<{ status: number; runId?: string; firstEventMs?: number; detail?: string }> {
  const started = performance.now();
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await fetch(`${base}/api/v1/stream?${new URLSearchParams({ prompt })}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const runId = res.headers.get('x-run-id') ?? undefined;
    if (res.status !== 200) {
      const body = (await res.json().catch(() => ({}))) as { detail?: string };
      return { status: res.status, ...(body.detail ? { detail: body.detail } : {}) };
    }
    if (!untilFirst) {
      controller.abort();
      return { status: 200, ...(runId ? { runId } : {}) };
    }
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      // An event is a block that has an `id:` line (comments and retry hints have none).
      if (/^id: ?\d+/m.test(text) && text.includes('\n\n')) {
        const firstEventMs = performance.now() - started;
        controller.abort();
        return { status: 200, ...(runId ? { runId } : {}), firstEventMs };
      }
    }
    return { status: 200, ...(runId ? { runId } : {}) };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Tenant A sends `flood` turns (each works `turnMs` in a worker) and hangs up on each once admitted;
 * while they wait, tenant B asks `probes` turns one after another and times each one's first event.
 * Then waits until A's flood has drained, so the stack is left idle.
 */
export async function measureFairness(ctx: FairnessContext, o: FairnessOptions): Promise<FairnessRow[]> {
  setMaxListeners(o.senders + o.probes + 10, ctx.signal); // one per request in flight
  const a = await ctx.newTenant({ budget: o.flood + 100 });
  const b = await ctx.newTenant({ budget: o.probes + 100 });
  const apis = ctx.stack.apis.map((x) => x.url);
  const floodPrompt = `script:${JSON.stringify([{ sleep: o.turnMs }, { delta: 'flood' }])}`;
  const probePrompt = `script:${JSON.stringify([{ delta: 'probe' }])}`;

  ctx.log(`fairness: tenant A sends ${o.flood} turns of ${o.turnMs} ms`);
  const statuses = new Map<number, number>();
  let next = 0;
  const floodStarted = performance.now();
  await Promise.all(
    Array.from({ length: o.senders }, async (_, s) => {
      while (next < o.flood && !ctx.signal.aborted) {
        next++;
        const r = await ask(
          apis[s % apis.length]!,
          a.tokens.read_write,
          floodPrompt,
          false,
          ctx.signal,
        ).catch(() => ({ status: 0 }));
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }),
  );
  const admitted = statuses.get(200) ?? 0;
  ctx.log(
    `fairness: flood sent in ${Math.round(performance.now() - floodStarted)} ms: ${JSON.stringify(Object.fromEntries(statuses))}`,
  );

  // B's turns go out at a steady pace while A's flood waits, each timed from its request to its
  // first event (not one after another: then only the first would wait behind the flood).
  const probes = await Promise.all(
    Array.from({ length: o.probes }, async (_, i) => {
      await sleep(i * o.probeEveryMs);
      return ask(apis[i % apis.length]!, b.tokens.read_write, probePrompt, true, ctx.signal).catch(() => ({
        status: 0,
        firstEventMs: undefined,
      }));
    }),
  );
  const firsts = probes.flatMap((r) => (r.firstEventMs === undefined ? [] : [r.firstEventMs]));
  const refused = probes.length - firsts.length;
  firsts.sort((x, y) => x - y);
  const p50 = Math.round(percentile(firsts, 50));
  const p99 = Math.round(percentile(firsts, 99));
  ctx.log(`fairness: tenant B first event p50 ${p50} ms, p99 ${p99} ms over ${firsts.length} turns`);

  // Leave the stack idle: wait for A's flood to drain (bounded by the drill's own time limit).
  const drainStarted = performance.now();
  const drained = await waitForDrain(apis[0]!, a.tokens.read_write, floodPrompt, ctx.signal);
  ctx.log(
    `fairness: flood drained ${drained ? 'in' : 'NOT within'} ${Math.round(performance.now() - drainStarted)} ms`,
  );

  return [
    {
      drill: 'fairness',
      measure: `tenant A turns admitted of ${o.flood} (${o.turnMs} ms each)`,
      value: admitted,
      target: `${o.flood} (or 503 when the backlog bound is lower)`,
      pass: admitted + (statuses.get(503) ?? 0) === o.flood && admitted > 0,
    },
    {
      drill: 'fairness',
      measure: `tenant B first event p99 under A's flood (ms, ${firsts.length} turns)`,
      value: p99,
      target: `≤ ${TARGET_MS} ms`,
      pass: refused === 0 && firsts.length === o.probes && p99 <= TARGET_MS,
    },
    {
      drill: 'fairness',
      measure: "tenant B first event p50 under A's flood (ms)",
      value: p50,
      target: 'reported',
      pass: firsts.length > 0,
    },
  ];
}

/**
 * A's flood has drained when a turn of A's that is sent now starts: it queues behind A's own backlog
 * (and ahead of nothing of A's), so its first event means the backlog before it has been taken.
 */
async function waitForDrain(
  base: string,
  token: string,
  prompt: string,
  signal: AbortSignal,
): Promise<boolean> {
  while (!signal.aborted) {
    const r = await ask(base, token, prompt, true, signal).catch(() => undefined);
    if (r?.firstEventMs !== undefined) return true;
    if (r && r.status !== 200 && r.status !== 503) return false;
    await sleep(1000);
  }
  return false;
}

export const drill = {
  name: 'fairness',
  description:
    "tenant A floods the agent queue with 2,000 turns; tenant B's turns still start within 2 s p99",
  timeoutMs: 420_000,
  run(ctx: FairnessContext): Promise<FairnessRow[]> {
    return measureFairness(ctx, {
      flood: ctx.scale(2000, 60),
      probes: ctx.scale(40, 5),
      turnMs: ctx.scale(400, 200),
      senders: 16,
      probeEveryMs: 250,
    });
  },
};
