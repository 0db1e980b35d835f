// The plan-review benchmark, in one run on a scratch database: a text plan of --resources resource
// changes (updates, replacements, destroys, creates, rules, built from the live inventory so that
// every address joins a live resource) reviewed against the --size demo environment, synced and
// scanned first (setup, not measured). Side by side:
//   (1) the text parser alone (MB/s) beside JSON.parse of the same plan as `terraform show -json`
//       (the built-in parser under the JSON path), and our JSON path (JSON.parse + parsePlanJson);
//   (2) the whole review (parse + live join + dependents + findings + conditions + cost), p50/p95 over
//       --runs runs, beside the raw SQL underneath it: the one candidate query alone.
//   (3) the same review as the API runs it (the parse on its worker thread, parsePlanOffThread) of the
//       2,000-change plan and of the largest plans of the public corpus (../shared/realworld: the
//       largest JSON and the largest text file), p50/p95 against the same target (skipped when absent).
// `npm run bench:plan-review -- --size=large --resources=2000 --runs=20`; docs/performance.md has the numbers.
import { sql } from '@opsi/db';
import { DETECTORS, runDetectors } from '@opsi/detectors';
import { collectWorld, PriceBook, syncInventory, type DemoSize } from '@opsi/inventory';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import {
  closeParsePools,
  parsePlanJson,
  parsePlanOffThread,
  parsePlanText,
  reviewParsedPlan,
  type ParsedPlan,
} from '@opsi/core';
import { REPO_ROOT } from '@opsi/test-support';
import { createTenantWithUser } from '@opsi/test-support';
import { createScratch, type Scratch } from '../pulse/lib/scratch';
import { percentile } from '../runs/lib/stats';
// The plan generator is shared with the parser's differential test, which parses the same plan.
import { benchPlan, type LiveRow } from '../../packages/core/src/plan-review/test/generate';

function option(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(arg.indexOf('=') + 1) : fallback;
}
const o = {
  size: option('size', 'large') as DemoSize,
  seed: Number(option('seed', '42')),
  resources: Number(option('resources', '2000')),
  runs: Number(option('runs', '20')),
  parseRuns: Number(option('parse-runs', '30')),
};
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

type Live = LiveRow;

async function main() {
  let scratch: Scratch | undefined;
  try {
    scratch = await createScratch(10);
    const s = scratch;
    const member = await createTenantWithUser(s);
    const tenantId = member.tenant.id;
    const book = await PriceBook.load(s.db);
    const connection = await s.db
      .insertInto('cloud_connections')
      .values({ tenant_id: tenantId, kind: 'demo', config: JSON.stringify({ seed: o.seed, size: o.size }) })
      .returning('id')
      .executeTakeFirstOrThrow();
    log(`generating and syncing the ${o.size} demo (setup, not measured)`);
    const inventory = collectWorld(
      { seed: o.seed, size: o.size, epoch: '2026-11-01', day: 0, commands: [] },
      book,
    );
    await syncInventory(s.db, { tenantId, connectionId: connection.id, scanId: null }, inventory, book);
    log(
      `${inventory.resources.length.toLocaleString('en-US')} resources synced; running the detectors (setup)`,
    );
    await runDetectors(s.db, tenantId, DETECTORS);
    const findings = await sql<{
      n: number;
    }>`select count(*)::int as n from findings where tenant_id = ${tenantId}`.execute(s.db);
    log(`${findings.rows[0]!.n} findings`);

    const live = (
      await sql<Live>`
        select arn, type, native_id, name, attributes from resources
        where tenant_id = ${tenantId} and deleted_at is null
          and type in ('aws_ebs_volume', 'aws_ec2_instance', 'aws_vpc_security_group', 'aws_vpc_eip')
        order by md5(arn) limit ${o.resources}`.execute(s.db)
    ).rows;
    const plan = benchPlan(live, o.resources);
    const jsonText = JSON.stringify(plan.json);
    const mb = (n: number) => n / 1024 / 1024;
    log(
      `plan: ${o.resources} resource changes, text ${mb(plan.text.length).toFixed(2)} MB, JSON ${mb(jsonText.length).toFixed(2)} MB`,
    );

    // (1) parsers
    const time = (fn: () => unknown, runs: number) => {
      fn();
      const ms: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        fn();
        ms.push(performance.now() - t0);
      }
      return percentile(ms, 50);
    };
    let parsed: ParsedPlan | null = null;
    const textMs = time(() => (parsed = parsePlanText(plan.text)), o.parseRuns);
    const rawJsonMs = time(() => JSON.parse(jsonText), o.parseRuns);
    const ourJsonMs = time(() => parsePlanJson(JSON.parse(jsonText)), o.parseRuns);
    if (!parsed || (parsed as ParsedPlan).changes.length !== o.resources)
      throw new Error('the text plan did not parse whole');
    const rate = (bytes: number, ms: number) => mb(bytes) / (ms / 1000);
    console.log('\n(1) parsing, median of', o.parseRuns, 'runs');
    console.log(
      `  text parser (ours)         ${textMs.toFixed(1)} ms  ${rate(plan.text.length, textMs).toFixed(1)} MB/s`,
    );
    console.log(
      `  JSON.parse (raw, built-in) ${rawJsonMs.toFixed(1)} ms  ${rate(jsonText.length, rawJsonMs).toFixed(1)} MB/s`,
    );
    console.log(
      `  JSON path (ours)           ${ourJsonMs.toFixed(1)} ms  ${rate(jsonText.length, ourJsonMs).toFixed(1)} MB/s`,
    );
    console.log(
      `  ratio text parser / JSON.parse throughput: ${(rate(plan.text.length, textMs) / rate(jsonText.length, rawJsonMs)).toFixed(2)}`,
    );

    // (2) the whole review beside the one candidate query
    const full: number[] = [];
    let annotations = 0;
    for (let i = 0; i < o.runs + 2; i++) {
      const t0 = performance.now();
      const review = await reviewParsedPlan(s.db, tenantId, parsePlanText(plan.text)!);
      if (i >= 2) full.push(performance.now() - t0);
      annotations = review.annotations.length;
    }
    const ids = live.map((r) => r.native_id);
    const raw: number[] = [];
    for (let i = 0; i < o.runs + 2; i++) {
      const t0 = performance.now();
      await sql`select id, arn, type, native_id, name, attributes, monthly_cost from resources
                where tenant_id = ${tenantId} and deleted_at is null and native_id = any(${ids}::text[])`.execute(
        s.db,
      );
      if (i >= 2) raw.push(performance.now() - t0);
    }
    console.log(
      `\n(2) review of ${o.resources} changes against ${inventory.resources.length.toLocaleString('en-US')} resources, ${o.runs} runs (${annotations} annotations)`,
    );
    console.log(
      `  review (ours)          p50 ${percentile(full, 50).toFixed(0)} ms  p95 ${percentile(full, 95).toFixed(0)} ms`,
    );
    console.log(
      `  candidate query (raw)  p50 ${percentile(raw, 50).toFixed(0)} ms  p95 ${percentile(raw, 95).toFixed(0)} ms`,
    );
    console.log(`  ratio p95 review / raw query: ${(percentile(full, 95) / percentile(raw, 95)).toFixed(1)}`);
    console.log(
      `  target p95 <= 2000 ms: ${percentile(full, 95) <= 2000 ? 'met' : 'MISSED'}; parser >= 50 MB/s: ${rate(plan.text.length, textMs) >= 50 ? 'met' : 'MISSED'}`,
    );

    // (3) as the API runs it: parse on the worker thread, then the review
    const corpus = `${REPO_ROOT}../shared/realworld`;
    const largest = (dir: string) => {
      const files = readdirSync(`${corpus}/${dir}`).map((f) => `${corpus}/${dir}/${f}`);
      return files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
    };
    const inputs: Array<[string, string]> = [[`${o.resources}-change text plan`, plan.text]];
    if (existsSync(`${corpus}/tf-plan-json`) && existsSync(`${corpus}/tf-plan-text`)) {
      for (const file of [largest('tf-plan-json'), largest('tf-plan-text')])
        inputs.push([`corpus ${file.slice(corpus.length + 1)}`, readFileSync(file, 'utf8')]);
    } else console.log('\n(3) corpus plans skipped: ../shared/realworld is absent');
    console.log(
      `\n(3) parse on the worker thread + review, as POST /api/v1/plan-review runs them, ${o.runs} runs`,
    );
    for (const [name, text] of inputs) {
      const ms: number[] = [];
      let changes = 0;
      for (let i = 0; i < o.runs + 2; i++) {
        const t0 = performance.now();
        const parsedPlan = await parsePlanOffThread(text);
        await reviewParsedPlan(s.db, tenantId, parsedPlan);
        if (i >= 2) ms.push(performance.now() - t0);
        changes = parsedPlan.changes.length;
      }
      const p95 = percentile(ms, 95);
      console.log(
        `  ${name} (${(text.length / 1024).toFixed(0)} KB, ${changes} changes)  p50 ${percentile(ms, 50).toFixed(0)} ms  p95 ${p95.toFixed(0)} ms  target p95 <= 2000 ms: ${p95 <= 2000 ? 'met' : 'MISSED'}`,
      );
    }
  } finally {
    await closeParsePools();
    await scratch?.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
