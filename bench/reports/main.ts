// The morning-report benchmark: the report of a `large` demo environment (seed 42, ~101,000 resources)
// after its first scan (every finding new, the backfilled days' drift) and after a scripted day (advance,
// a fix with demo exec, a scan), timed through our path (computeReport: the sections' queries through
// Kysely, shaped in JS) beside the same SQL statements replayed through plain pg, in one run.
// `npm run bench:reports`; docs/performance.md explains each number. Options (all optional):
//   --size=large --seed=42   the demo environment
//   --runs=5                 timed repetitions of each side (alternating; the median is reported)
//   --no-day                 only the first report (skips the second scan)
//   --json=path              also write every number as JSON
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import {
  advanceDemo,
  computeReport,
  connectEnvironment,
  createTenant,
  execDemoCommand,
  generateMorningReport,
  requestScan,
  runScan,
} from '@opsi/core';
import { sql } from '@opsi/db';
import type { DemoSize } from '@opsi/inventory';
import { createScratch, openScratches } from '../inventory/lib/scratch';
import { fmt, markdownTable } from '../inventory/lib/table';

function option(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3) : fallback;
}
const o = {
  size: option('size', 'large') as DemoSize,
  seed: Number(option('seed', '42')),
  runs: Number(option('runs', '5')),
  day: !process.argv.includes('--no-day'),
  json: option('json', ''),
};
const TARGET_SECONDS = 10;
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

let cleaning: Promise<unknown> | undefined;
const cleanup = () => (cleaning ??= Promise.allSettled(openScratches().map((x) => x.close())));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: dropping the scratch database`);
    void cleanup().finally(() => process.exit(130));
  });
}

// Every statement Kysely sends goes through pg.Client#query: record them while capturing.
type Statement = { text: string; values: unknown[] };
let capturing: Statement[] | undefined;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (capturing && typeof args[0] === 'string')
    capturing.push({ text: args[0], values: (args[1] as unknown[]) ?? [] });
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(
  label: string,
  db: Awaited<ReturnType<typeof createScratch>>['db'],
  raw: pg.Pool,
  tenantId: string,
  period: { from: Date; to: Date },
) {
  capturing = [];
  const shaped = await computeReport(db, tenantId, period);
  const statements = capturing;
  capturing = undefined;
  const ours: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < o.runs; i++) {
    let t0 = performance.now();
    await computeReport(db, tenantId, period);
    ours.push(performance.now() - t0);
    t0 = performance.now();
    // The same statements, all at once on a pool of the same size (the sections run concurrently in ours too).
    await Promise.all(statements.map((s) => raw.query(s.text, s.values)));
    plain.push(performance.now() - t0);
  }
  const s = shaped.sections;
  return {
    label,
    statements: statements.length,
    ours_ms: median(ours),
    raw_ms: median(plain),
    ours_all_ms: ours,
    raw_all_ms: plain,
    counts: {
      new_findings: s.new_findings.length,
      resolved: s.resolved_findings.length,
      regressed: s.regressed_findings.length,
      drift: s.drift.totals,
      top_clusters: s.top_clusters.length,
    },
  };
}

async function main() {
  const scratch = await createScratch(10);
  const raw = new pg.Pool({ connectionString: scratch.url, max: 10 });
  try {
    const tenant = await createTenant(scratch.db, { slug: 'bench-reports', name: 'Bench reports' });
    await connectEnvironment(scratch.db, tenant.id, {
      kind: 'demo',
      seed: o.seed,
      size: o.size,
      epoch: '2026-11-01',
    });
    let t0 = performance.now();
    const scan = await runScan(scratch.db, (await requestScan(scratch.db, null, tenant.id, 'bench')).id);
    const firstScanS = (performance.now() - t0) / 1000;
    const resources = (
      await sql<{
        n: number;
      }>`select count(*)::int as n from resources where tenant_id = ${tenant.id} and deleted_at is null`.execute(
        scratch.db,
      )
    ).rows[0]!.n;
    log(
      `first scan (setup): ${firstScanS.toFixed(1)} s, ${resources} resources, ${JSON.stringify(scan.counts)}`,
    );

    const results = [];
    let periodTo = new Date();
    const first = { from: new Date(periodTo.getTime() - 86_400_000), to: periodTo };
    results.push(await measure('first report (after the first scan)', scratch.db, raw, tenant.id, first));
    t0 = performance.now();
    await generateMorningReport(scratch.db, tenant.id, { periodTo, requestedBy: 'bench' });
    const writeMs = performance.now() - t0;
    log(`generateMorningReport (sections + write + notification): ${writeMs.toFixed(0)} ms`);

    let secondScanS: number | undefined;
    if (o.day) {
      await advanceDemo(scratch.db, tenant.id, 1);
      const eip = (
        await sql<{ native_id: string }>`
          select native_id from resources where tenant_id = ${tenant.id} and type = 'aws_vpc_eip' and deleted_at is null
            and attributes->>'association_id' is null order by arn limit 1`.execute(scratch.db)
      ).rows[0];
      if (eip)
        await execDemoCommand(
          scratch.db,
          tenant.id,
          `aws ec2 release-address --allocation-id ${eip.native_id}`,
        );
      t0 = performance.now();
      await runScan(scratch.db, (await requestScan(scratch.db, null, tenant.id, 'bench')).id);
      secondScanS = (performance.now() - t0) / 1000;
      log(`day 1 scan (setup): ${secondScanS.toFixed(1)} s`);
      const from = periodTo;
      periodTo = new Date();
      results.push(
        await measure('second report (after a day)', scratch.db, raw, tenant.id, { from, to: periodTo }),
      );
    }

    const header = [
      'report',
      'statements',
      'ours (computeReport)',
      'raw pg (same SQL)',
      'ours / raw',
      'target',
      'result',
    ];
    const lines = results.map((r) => [
      r.label,
      String(r.statements),
      `${fmt(r.ours_ms / 1000, 2)} s`,
      `${fmt(r.raw_ms / 1000, 2)} s`,
      `${(r.ours_ms / r.raw_ms).toFixed(2)}×`,
      `<= ${TARGET_SECONDS} s`,
      r.ours_ms / 1000 <= TARGET_SECONDS ? 'PASS' : 'FAIL',
    ]);
    console.log(
      `\nmorning report, ${o.size} demo (seed ${o.seed}, ${resources} resources), median of ${o.runs}\n`,
    );
    console.log(markdownTable(header, lines));
    for (const r of results) console.log(`${r.label}: ${JSON.stringify(r.counts)}`);
    if (o.json)
      writeFileSync(
        o.json,
        JSON.stringify(
          { size: o.size, seed: o.seed, resources, firstScanS, secondScanS, writeMs, results },
          null,
          2,
        ),
      );
  } finally {
    await raw.end();
    await cleanup();
  }
}

await main();
