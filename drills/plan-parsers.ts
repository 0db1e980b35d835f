import { parsePlan } from '../packages/core/src/plan-review/parse';
import { ALL_CASES } from '../packages/core/src/plan-review/test/pathological';
import type { Drill } from './lib/types';

// Issue 24: a fuzzing pass over the plan parsers with generated pathological inputs. In process, each
// generated case (a short unit repeated inside the context where one of the parser's matchers reads
// it: headers, bodies, heredocs, 0.11 attributes, closing arrows, JSON marker trees) and seeded random
// mixes of those units are parsed at two sizes; the time per byte must stay bounded and must not grow
// with the size (a quadratic matcher shows up as 4x the time per byte at 4x the size). Over HTTP, a
// sample of them is posted to an API of the stack while /healthz is probed: no 5xx, each answered
// within a second, /healthz's median probe under 50 ms.

const UNITS = [
  ' ',
  '\x1b]',
  '\x1b[1',
  '# ',
  '"',
  '\\',
  '->',
  ']->',
  ':',
  '(',
  '{',
  '[',
  '\u2028',
  '= ',
  ' -> ',
];

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random cases: a line of randomly chosen units, repeated, inside a random case's context. */
function randomCases(count: number, seed: number) {
  const next = random(seed);
  return Array.from({ length: count }, (_, i) => {
    const base = ALL_CASES[Math.floor(next() * ALL_CASES.length)]!;
    const unit = Array.from(
      { length: 1 + Math.floor(next() * 4) },
      () => UNITS[Math.floor(next() * UNITS.length)],
    ).join('');
    return {
      name: `random #${i} (${base.name} + ${JSON.stringify(unit)})`,
      make: (n: number) =>
        base.make(n).replace(/(\n)/, `$1${unit.repeat(Math.max(1, Math.floor(n / unit.length / 2)))}\n`),
    };
  });
}

/** The fastest of three parses (ms): one run alone is at the mercy of a garbage collection. */
function parseMs(text: string): number {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const t = performance.now();
    try {
      parsePlan(text);
    } catch (e) {
      if ((e as { status?: number }).status !== 400) throw e;
    }
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

export const drill: Drill = {
  name: 'plan-parsers',
  description: 'generated pathological plans: time per byte bounded, API answers and /healthz during them',
  timeoutMs: 300_000,
  async run(ctx) {
    const small = ctx.scale(50_000, 20_000);
    const cases = [...ALL_CASES, ...randomCases(ctx.scale(400, 60), 26)];
    let worstPerKb = 0;
    let worstGrowth = 0;
    let worstName = '';
    for (const c of cases) {
      if (ctx.signal.aborted) break;
      const a = c.make(small);
      const b = c.make(small * 4);
      const perKbSmall = (parseMs(a) / a.length) * 1000;
      const perKbLarge = (parseMs(b) / b.length) * 1000;
      // Growth only counts once the time is measurable (parses of a few ms are timer and GC noise).
      const growth = perKbLarge * (b.length / 1000) > 20 ? perKbLarge / Math.max(perKbSmall, 0.001) : 1;
      if (perKbLarge > worstPerKb) {
        worstPerKb = perKbLarge;
        worstName = c.name;
      }
      worstGrowth = Math.max(worstGrowth, growth);
    }
    ctx.log(`${cases.length} cases at ${small} and ${small * 4} characters; slowest per byte: ${worstName}`);

    // Over HTTP: the larger size of a sample, posted while /healthz is probed.
    const tenant = await ctx.newTenant();
    const api = ctx.stack.apis[0]!.url;
    const sample = cases.filter(
      (_, i) => i % Math.max(1, Math.floor(cases.length / ctx.scale(60, 15))) === 0,
    );
    const post = (plan: string) =>
      fetch(`${api}/api/v1/plan-review`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.tokens.read_write}`, 'content-type': 'application/json' },
        body: JSON.stringify({ plan }),
      });
    // The parser's thread starts with the first review (under tsx, a second or so): not measured.
    await (await post('No changes. Your infrastructure matches the configuration.')).arrayBuffer();
    const probes: number[] = [];
    let posting = true;
    const prober = (async () => {
      while (posting) {
        const t = performance.now();
        await fetch(`${api}/healthz`).then((r) => r.arrayBuffer());
        probes.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    let fiveXx = 0;
    let slowest = 0;
    for (const c of sample) {
      const t = performance.now();
      const res = await post(c.make(small));
      await res.arrayBuffer();
      slowest = Math.max(slowest, performance.now() - t);
      if (res.status >= 500) fiveXx++;
    }
    posting = false;
    await prober;
    probes.sort((x, y) => x - y);
    const median = probes[Math.floor(probes.length / 2)] ?? 0;
    const round = (n: number) => Math.round(n * 100) / 100;
    return [
      {
        drill: 'plan-parsers',
        measure: 'worst parse time per KB, in process (ms)',
        value: round(worstPerKb),
        target: '≤ 5 ms/KB',
        pass: worstPerKb <= 5,
      },
      {
        drill: 'plan-parsers',
        measure: 'worst growth of time per byte at 4x the size',
        value: round(worstGrowth),
        target: '≤ 3x (linear: 1x)',
        pass: worstGrowth <= 3,
      },
      {
        drill: 'plan-parsers',
        measure: `plan reviews of ${sample.length} generated plans answered 5xx`,
        value: fiveXx,
        target: '0',
        pass: fiveXx === 0,
      },
      {
        drill: 'plan-parsers',
        measure: 'slowest of those answers (ms)',
        value: Math.round(slowest),
        target: '≤ 1000 ms',
        pass: slowest <= 1000,
      },
      {
        drill: 'plan-parsers',
        measure: '/healthz median probe during them (ms)',
        value: round(median),
        target: '≤ 50 ms',
        pass: median <= 50,
      },
    ];
  },
};
