// The text parser alone, without a database: the plan bench/plan-review parses (its generator, over
// synthetic live rows), parsed by parsePlanText and by the parser it replaced (the frozen copy the
// differential test keeps as its oracle), alternating, median and minimum of --runs parses each.
// On a shared machine the minimum is the steadier figure. `--only=new` or `--only=old` parses with one
// parser only, for an instruction count under valgrind (docs/performance.md, "Plan review").
// `npm run bench:plan-review:parser -- --resources=2000 --runs=40`
import { parsePlanText } from '@opsi/core';
import { benchPlan, syntheticLive } from '../../packages/core/src/plan-review/test/generate';
import { parsePlanText as previous } from '../../packages/core/src/plan-review/test/parse-text.oracle';
import { percentile } from '../runs/lib/stats';

function option(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(arg.indexOf('=') + 1) : fallback;
}
const resources = Number(option('resources', '2000'));
const runs = Number(option('runs', '40'));
const only = option('only', '');

const text = benchPlan(syntheticLive(resources, 42), resources).text;
const parsers = [
  { name: 'scanner (parsePlanText)', parse: parsePlanText, key: 'new', ms: [] as number[] },
  { name: 'previous (regex per line)', parse: previous, key: 'old', ms: [] as number[] },
].filter((p) => !only || p.key === only);
for (const p of parsers)
  if (p.parse(text)?.changes.length !== resources) throw new Error(`${p.name}: short parse`);
for (let i = 0; i < runs; i++) {
  for (const p of parsers) {
    const t0 = performance.now();
    p.parse(text);
    p.ms.push(performance.now() - t0);
  }
}
const mb = text.length / 1024 / 1024;
console.log(`plan: ${resources} resource changes, ${mb.toFixed(2)} MB of text; ${runs} parses each`);
for (const p of parsers) {
  const med = percentile(p.ms, 50);
  const min = Math.min(...p.ms);
  console.log(
    `  ${p.name.padEnd(26)} median ${med.toFixed(1)} ms (${(mb / (med / 1000)).toFixed(1)} MB/s), min ${min.toFixed(1)} ms (${(mb / (min / 1000)).toFixed(1)} MB/s)`,
  );
}
