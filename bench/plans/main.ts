// The resolution-plans benchmark, in one run on a scratch database: over the `large` demo environment
// (seed 42, ~101,000 resources, synced and scanned first: setup, not measured), for every open finding,
// (1) generation with the built-in engine (executeGeneratePlan: reads, remediation knowledge, validation,
// writes) beside the raw reads it rests on (the same rows with plain Kysely); (2) verify of a step whose
// fix was applied with demo exec (executeVerifyStep: describe through the demo connection, judge, record
// in the trail and the audit chain) beside the raw describe (building the demo world for the call, as a
// connector without the kept world would); (3) finalize (executeFinalizePlan: re-sync of the cluster's
// resources, the detection query, resolve or still_present, all records) beside the detection query alone
// in the sandbox. The job queue's own round trip is not in these numbers (bench/runs measures BullMQ).
// `npm run bench:plans`; docs/performance.md explains each number.
// Options: --size=large|medium|small --seed=42 --sample=20 (findings verified and finalized) --json=path
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { sql } from '@opsi/db';
import {
  DETECTORS,
  DETECTOR_LIMITS,
  detectorById,
  evidenceSql,
  runDetectors,
  runSandboxed,
} from '@opsi/detectors';
import { buildWorld, collectWorld, PriceBook, syncInventory, type DemoSize } from '@opsi/inventory';
import {
  demoSpec,
  executeFinalizePlan,
  executeGeneratePlan,
  executeVerifyStep,
  execDemoCommand,
} from '@opsi/core';
import { createTenantWithUser } from '@opsi/test-support';
import { percentile, renderTable, type Row } from '../runs/lib/stats';
import { createScratch, type Scratch } from '../pulse/lib/scratch';

function option(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(arg.indexOf('=') + 1) : fallback;
}
const o = {
  size: option('size', 'large') as DemoSize,
  seed: Number(option('seed', '42')),
  sample: Number(option('sample', '20')),
  json: option('json', ''),
};
const TARGET = { generateMs: 2000, verifyMs: 1000, finalizeMs: 5000 };
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

let scratch: Scratch | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void (scratch?.close() ?? Promise.resolve()).finally(() => process.exit(130)));

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

const stats = (xs: number[]) => ({
  p50: percentile(xs, 50),
  p95: percentile(xs, 95),
  max: Math.max(...xs),
  n: xs.length,
});

async function main() {
  log(
    `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  scratch = await createScratch(10);
  const s = scratch;
  const member = await createTenantWithUser(s);
  const tenantId = member.tenant.id;
  const book = await PriceBook.load(s.db);
  const spec = { seed: o.seed, size: o.size, epoch: '2026-11-01', day: 0, commands: [] };
  const connection = await s.db
    .insertInto('cloud_connections')
    .values({ tenant_id: tenantId, kind: 'demo', config: JSON.stringify({ seed: o.seed, size: o.size }) })
    .returning('id')
    .executeTakeFirstOrThrow();
  await s.db
    .insertInto('demo_environments')
    .values({ tenant_id: tenantId, seed: o.seed, size: o.size, epoch: spec.epoch, day: 0, commands: '[]' })
    .execute();
  log(`setup: generating, syncing and scanning the ${o.size} demo (not measured)`);
  const inventory = collectWorld(spec, book);
  await syncInventory(s.db, { tenantId, connectionId: connection.id, scanId: null }, inventory, book);
  const detection = await runDetectors(s.db, tenantId, DETECTORS);
  log(
    `setup: ${inventory.resources.length.toLocaleString('en-US')} resources, ${detection.findings} findings`,
  );

  const findings = await s.db
    .selectFrom('findings')
    .select(['id', 'group_id', 'check_id'])
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'open')
    .orderBy('check_id')
    .execute();

  // (1) generation --------------------------------------------------------------------------------
  const gen: number[] = [];
  const genRaw: number[] = [];
  const plans: Array<{ id: string; findingId: string; checkId: string }> = [];
  for (const f of findings) {
    const plan = await s.db
      .insertInto('resolution_plans')
      .values({ tenant_id: tenantId, group_id: f.group_id, finding_id: f.id, created_by: 'bench' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const [ms, r] = await timed(() =>
      executeGeneratePlan({ db: s.db, generationTimeoutMs: 120_000 }, tenantId, plan.id),
    );
    if (r.outcome !== 'ready') throw new Error(`generation of ${f.check_id} failed: ${JSON.stringify(r)}`);
    gen.push(ms);
    plans.push({ id: plan.id, findingId: f.id, checkId: f.check_id });
    const [rawMs] = await timed(async () => {
      await s.db.selectFrom('findings').selectAll().where('id', '=', f.id).executeTakeFirst();
      await sql`select fr.*, r.attributes from finding_resources fr join findings g on g.id = fr.finding_id
        left join resources r on r.tenant_id = fr.tenant_id and r.arn = fr.arn where g.group_id = ${f.group_id}`.execute(
        s.db,
      );
      await s.db.selectFrom('recommendations').selectAll().where('finding_id', '=', f.id).executeTakeFirst();
      await s.db
        .selectFrom('finding_audit_steps')
        .select('seq')
        .where('finding_id', '=', f.id)
        .orderBy('seq', 'desc')
        .limit(1)
        .execute();
      await s.db.selectFrom('learnings').selectAll().where('tenant_id', '=', tenantId).limit(3).execute();
    });
    genRaw.push(rawMs);
  }
  log(`(1) generated ${plans.length} plans`);

  // (2) verify: apply the first fix of a sample of plans with demo exec, then verify that step --------
  const ver: number[] = [];
  const verRaw: number[] = [];
  const sample: typeof plans = [];
  const seen = new Set<string>();
  for (const p of plans) {
    if (sample.length >= o.sample || seen.has(p.checkId)) continue;
    const step = await s.db
      .selectFrom('resolution_plan_steps')
      .select(['seq', 'fix_command', 'check_spec'])
      .where('plan_id', '=', p.id)
      .where('fix_command', 'is not', null)
      .where('check_spec', 'is not', null)
      .orderBy('seq')
      .executeTakeFirst();
    if (!step) continue;
    try {
      await execDemoCommand(s.db, tenantId, step.fix_command!);
    } catch {
      continue; // another plan's fix already changed this resource
    }
    seen.add(p.checkId);
    sample.push(p);
    await s.db
      .updateTable('resolution_plan_steps')
      .set({ status: 'verifying' })
      .where('plan_id', '=', p.id)
      .where('seq', '=', step.seq)
      .execute();
    const [ms, r] = await timed(() =>
      executeVerifyStep(
        { db: s.db },
        { tenant_id: tenantId, plan_id: p.id, seq: step.seq },
        { tries: 0, retries: 0 },
      ),
    );
    if (r.outcome !== 'verified') log(`(2) ${p.checkId} step ${step.seq}: ${r.outcome} ${r.observed ?? ''}`);
    ver.push(ms);
    const current = await demoSpec(s.db, tenantId);
    const arn = (step.check_spec as { arn: string }).arn;
    const [rawMs] = await timed(async () => buildWorld(current).world.resources.get(arn));
    verRaw.push(rawMs);
  }
  log(`(2) verified ${ver.length} steps`);

  // (3) finalize: the sample (fixed in part or whole) and as many unfixed plans ------------------------
  const fin: number[] = [];
  const finRaw: number[] = [];
  const outcomes: Record<string, number> = {};
  const unfixed = plans.filter((p) => !sample.includes(p)).slice(0, o.sample);
  for (const p of [...sample, ...unfixed]) {
    await s.db
      .updateTable('resolution_plan_steps')
      .set({ status: 'confirmed' })
      .where('plan_id', '=', p.id)
      .where('final', '=', false)
      .where('status', '!=', 'verified')
      .execute();
    await s.db.updateTable('resolution_plans').set({ status: 'finalizing' }).where('id', '=', p.id).execute();
    const [ms, r] = await timed(() =>
      executeFinalizePlan({ db: s.db }, { tenant_id: tenantId, plan_id: p.id }),
    );
    outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    fin.push(ms);
    const arns = (
      await s.db.selectFrom('finding_resources').select('arn').where('finding_id', '=', p.findingId).execute()
    ).map((x) => x.arn);
    const detector = detectorById(p.checkId)!;
    const [rawMs] = await timed(() =>
      runSandboxed(s.db, tenantId, evidenceSql(detector, arns), DETECTOR_LIMITS),
    );
    finRaw.push(rawMs);
  }
  log(`(3) finalized ${fin.length} plans: ${JSON.stringify(outcomes)}`);

  const g = stats(gen);
  const v = stats(ver);
  const f = stats(fin);
  const rows: Row[] = [
    {
      id: '(1)',
      metric: `generation p95, builtin engine (${g.n} plans)`,
      unit: 'ms',
      ours: g.p95,
      raw: stats(genRaw).p95,
      targets: [{ kind: 'abs', direction: 'lower', value: TARGET.generateMs }],
    },
    { id: '(1)', metric: 'generation p50', unit: 'ms', ours: g.p50, raw: stats(genRaw).p50 },
    {
      id: '(2)',
      metric: `verify p95 (${v.n} steps, after demo exec)`,
      unit: 'ms',
      ours: v.p95,
      raw: stats(verRaw).p95,
      targets: [{ kind: 'abs', direction: 'lower', value: TARGET.verifyMs }],
    },
    { id: '(2)', metric: 'verify p50', unit: 'ms', ours: v.p50, raw: stats(verRaw).p50 },
    {
      id: '(3)',
      metric: `finalize p95 (${f.n} plans)`,
      unit: 'ms',
      ours: f.p95,
      raw: stats(finRaw).p95,
      targets: [{ kind: 'abs', direction: 'lower', value: TARGET.finalizeMs }],
    },
    { id: '(3)', metric: 'finalize p50', unit: 'ms', ours: f.p50, raw: stats(finRaw).p50 },
  ];
  console.log(
    `\n${o.size} demo, seed ${o.seed}: ${inventory.resources.length.toLocaleString('en-US')} resources\n`,
  );
  console.log(renderTable(rows));
  console.log(
    `\n  generation max ${g.max.toFixed(0)} ms; verify max ${v.max.toFixed(0)} ms (the first builds the world); finalize max ${f.max.toFixed(0)} ms`,
  );
  if (o.json)
    writeFileSync(
      o.json,
      JSON.stringify({ options: o, generation: g, verify: v, finalize: f, outcomes }, null, 2),
    );
  await s.close();
}

main().catch(async (e) => {
  console.error(e);
  await scratch?.close();
  process.exit(1);
});
