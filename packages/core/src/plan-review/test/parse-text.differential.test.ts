/**
 * The text parser against the one it replaced (`parse-text.oracle.ts`, a frozen copy of the
 * regex-per-line parser kept here only as the oracle): over the fixtures, the plans written in the
 * other tests, the benchmark's plan, seeded random plans using the whole rendering, and seeded damaged
 * copies of all of those, both must give the same parse, value for value, key order included.
 * The fixtures' parses are also committed (`expected/`), so a change of output shows in review.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePlanText } from '../parse-text';
import { benchPlan, mutate, randomPlan, syntheticLive } from './generate';
import { parsePlanText as oracle } from './parse-text.oracle';

/** JSON that keeps what JSON.stringify would lose: undefined, -0, NaN and infinities. */
const canon = (v: unknown) =>
  JSON.stringify(
    v,
    (_k, x: unknown) =>
      x === undefined
        ? '<undefined>'
        : typeof x === 'number' && (Object.is(x, -0) || !Number.isFinite(x))
          ? `<number ${Object.is(x, -0) ? '-0' : String(x)}>`
          : typeof x === 'symbol'
            ? `<symbol ${x.description}>`
            : x,
    1,
  );

/** The parse, or the error it throws (the old parser threw on a quoted key that is not valid JSON). */
function outcome(parse: (t: string) => unknown, text: string): string {
  try {
    return canon(parse(text));
  } catch (e) {
    return canon({ threw: String(e) });
  }
}

function same(text: string, label: string) {
  const want = outcome(oracle, text);
  const got = outcome(parsePlanText, text);
  // The one intended difference: where the old parser threw (a quoted key that is not valid JSON, which
  // reached the API as a 500), the new one parses, keeping the key as written.
  if (want.includes('"threw"')) {
    expect(got, label).not.toContain('"threw"');
    return;
  }
  if (got !== want) {
    // The structural diff first (readable), then the exact text (key order, -0, undefined).
    expect(JSON.parse(got), label).toEqual(JSON.parse(want));
    expect(got, label).toBe(want);
  }
}

const here = new URL('.', import.meta.url);
const fixturesDir = new URL('../fixtures/', here);
const fixtures = readdirSync(fixturesDir)
  .filter((f) => f.endsWith('.txt'))
  .map((f) => ({ name: f, text: readFileSync(new URL(f, fixturesDir), 'utf8') }));

/** The plans written inline in the other plan-review tests (template literals without substitutions). */
function inlinePlans(): string[] {
  const files = [new URL('../parse.test.ts', here)];
  const out: string[] = [];
  for (const f of files) {
    const src = readFileSync(f, 'utf8');
    for (const m of src.matchAll(/`((?:[^`\\$]|\\.|\$(?!\{))*)`/g)) {
      const raw = m[1]!;
      if (!raw.includes('\n')) continue;
      // The literal's value: its escapes resolved as the test file's own literal resolves them.
      out.push(String(new Function(`return \`${raw}\`;`)()));
    }
  }
  return out;
}

// Thousands of parses, twice each: generous on a loaded shared machine (no assertion is on time).
describe('text parser: identical parse to the parser it replaced', { timeout: 120_000 }, () => {
  it('the fixtures, and their committed parses', async () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(2);
    for (const f of fixtures) {
      same(f.text, f.name);
      await expect(canon(parsePlanText(f.text))).toMatchFileSnapshot(`./expected/${f.name}.parsed.json`);
    }
  });

  it('the plans written inline in parse.test.ts', () => {
    const plans = inlinePlans();
    expect(plans.length).toBeGreaterThanOrEqual(3);
    for (const [k, p] of plans.entries()) same(p, `inline plan ${k}`);
  });

  it("the benchmark's plan (2,000 changes)", () => {
    const plan = benchPlan(syntheticLive(400, 7), 2000).text;
    expect(parsePlanText(plan)!.changes).toHaveLength(2000);
    same(plan, 'bench plan');
  });

  it('seeded random plans: every construct, CI noise and colours', () => {
    for (let seed = 1; seed <= 600; seed++) same(randomPlan(seed), `randomPlan(${seed})`);
  });

  it('seeded damaged plans: dropped, doubled, cut, re-indented and noisy lines', () => {
    const bases = [
      ...fixtures.map((f) => f.text),
      ...inlinePlans(),
      benchPlan(syntheticLive(20, 3), 30).text,
    ];
    for (let seed = 1; seed <= 300; seed++) {
      for (const [k, base] of bases.entries())
        same(mutate(base, seed * 31 + k), `mutate(base ${k}, ${seed})`);
      const r = randomPlan(10_000 + seed);
      same(mutate(r, seed, 20), `mutate(randomPlan(${10_000 + seed}), ${seed})`);
    }
  });
});
