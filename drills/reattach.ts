import { readSse, type SseEvent } from '../test/support/sse';
import { script } from '../test/support/stack';
import type { Drill } from './lib/types';

// Clients that keep dropping their stream: each reads a few events, hangs up, and re-attaches on the
// other API process (alternately with Last-Event-ID and with ?after_seq=), while ten runs emit about
// 200 events/s in all. Afterwards every run's events must be exactly 1..n: none lost, none twice.

const TERMINAL = new Set(['run.completed', 'run.failed']);

interface Followed {
  events: SseEvent[];
  cycles: number;
  errors: number;
}

async function follow(
  apis: string[],
  token: string,
  prompt: string,
  signal: AbortSignal,
  rand: () => number,
): Promise<Followed> {
  const out: Followed = { events: [], cycles: 0, errors: 0 };
  let sessionId: string | undefined;
  for (let attempt = 0; !signal.aborted && attempt < 10_000; attempt++) {
    const api = apis[attempt % apis.length]!;
    const last = out.events.at(-1)?.id ?? 0;
    const take = 1 + Math.floor(rand() * 6);
    let got = 0;
    const url = sessionId
      ? `${api}/api/v1/stream/attach?${new URLSearchParams({
          session_id: sessionId,
          ...(attempt % 2 ? { after_seq: String(last) } : {}),
        })}`
      : `${api}/api/v1/stream?${new URLSearchParams({ prompt })}`;
    try {
      const res = await readSse(url, {
        token,
        headers: sessionId && attempt % 2 === 0 ? { 'last-event-id': String(last) } : {},
        onOpen: (r) => (sessionId ??= r.headers.get('x-session-id') ?? undefined),
        stopAfter: () => ++got >= take,
        timeoutMs: 60_000,
      });
      if (res.status !== 200) {
        out.errors++;
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      out.events.push(...res.events);
    } catch {
      out.errors++;
      continue;
    }
    if (out.events.some((e) => TERMINAL.has(e.event))) return out;
    out.cycles++;
  }
  return out;
}

export const drill: Drill = {
  name: 'reattach',
  description: '1,000 drop-and-re-attach cycles over both APIs while runs emit about 200 events/s',
  timeoutMs: 300_000,
  async run(ctx) {
    const target = ctx.scale(1000, 40);
    const concurrent = ctx.scale(10, 3);
    const deltas = ctx.scale(150, 40);
    const steps: unknown[] = [];
    for (let i = 0; i < deltas; i++) steps.push({ delta: `d${i} ` }, { sleep: 50 });
    const tenant = await ctx.newTenant();
    const apis = ctx.stack.apis.map((a) => a.url);
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const runs: Followed[] = [];
    const t0 = Date.now();
    let cycles = 0;
    while (cycles < target && !ctx.signal.aborted) {
      const batch = await Promise.all(
        Array.from({ length: concurrent }, () =>
          follow(apis, tenant.tokens.read_write, script(steps), ctx.signal, rand),
        ),
      );
      runs.push(...batch);
      cycles = runs.reduce((a, r) => a + r.cycles, 0);
      ctx.log(`${cycles}/${target} re-attach cycles over ${runs.length} runs`);
    }
    const seconds = (Date.now() - t0) / 1000;
    let lost = 0;
    let duplicated = 0;
    let unfinished = 0;
    let received = 0;
    for (const run of runs) {
      const terminal = run.events.find((e) => TERMINAL.has(e.event));
      if (!terminal) unfinished++;
      const top = terminal?.id ?? Math.max(0, ...run.events.map((e) => e.id));
      const unique = new Set(run.events.map((e) => e.id));
      received += run.events.length;
      duplicated += run.events.length - unique.size;
      for (let s = 1; s <= top; s++) if (!unique.has(s)) lost++;
    }
    const errors = runs.reduce((a, r) => a + r.errors, 0);
    const row = (measure: string, value: number | string, t: string, pass: boolean) => ({
      drill: 'reattach',
      measure,
      value,
      target: t,
      pass,
    });
    return [
      row('re-attach cycles', cycles, `≥ ${target}`, cycles >= target),
      row('events lost', lost, '0', lost === 0),
      row('events duplicated', duplicated, '0', duplicated === 0),
      row('runs without their terminal event', unfinished, '0', unfinished === 0),
      row('refused or failed re-attaches', errors, '0', errors === 0),
      row('events received per second (all runs)', Math.round(received / seconds), 'info (about 200)', true),
    ];
  },
};
