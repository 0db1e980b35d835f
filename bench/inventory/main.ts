// The inventory-sync benchmark: syncInventory of the `large` demo environment (seed 42, ~101,000
// resources, ~3.35M rows in all) into an empty tenant, beside the same rows written by plain COPY and by
// plain multi-row INSERT, and a re-sync of the unchanged environment; peak memory over generation and
// sync. `npm run bench:inventory`; docs/performance.md explains each number. Options (all optional):
//   --size=large --seed=42        the demo environment (xlarge: about 1,000,000 resources, built in parts;
//                                 `npm run bench:inventory:xlarge` runs its sync alone, with its targets)
//   --insert-rows=1000            rows per multi-row INSERT statement (capped by the 65,535-parameter limit)
//   --only=sync,resync,copy,insert   run some parts only (sync always runs when resync does)
//   --no-verify                   skip the row checksums that prove raw and ours wrote the same values
//   --live-heap                   diagnostic: force a full GC before each phase of the sync and report the
//                                 live heap there (slows the sync: its time and peaks are then not results)
//   --json=path                   also write every number as JSON
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { createTenant } from '@opsi/core';
import { createPostgresDatabase, sql, type Db } from '@opsi/db';
import { testServerUrl } from '@opsi/db/testing';
import { observeWorld, PriceBook, syncInventory, type DemoSize, type SyncResult } from '@opsi/inventory';
import { checksums, differences, TABLES, tupleCounters, type TableChecksum } from './lib/checksum';
import { mib, MemoryWatch, type MemoryReport } from './lib/memory';
import { createScratch, openScratches, type Scratch } from './lib/scratch';
import { fmt, markdownTable, renderResults, type Row } from './lib/table';
import { processCpuMs, QueryTrace, type PhaseSummary } from './lib/trace';
import { copyTables, insertTables, ordered, prepare, rawTables, type RawTable, type RowOrder } from './raw';

function option(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3) : fallback;
}
const o = {
  size: option('size', 'large') as DemoSize,
  seed: Number(option('seed', '42')),
  insertRows: Number(option('insert-rows', '1000')),
  only: new Set(option('only', 'sync,resync,copy,insert').split(',')),
  verify: !process.argv.includes('--no-verify'),
  liveHeap: process.argv.includes('--live-heap'),
  json: option('json', ''),
};
const spec = { seed: o.seed, size: o.size, epoch: '2026-11-01', day: 0, commands: [] };

let liveHeapAfterGeneration: (() => void) | undefined;
let liveHeapBeforePhase: ((phase: string) => void) | undefined;

// The whale (xlarge, issue 30): sync within 10 minutes and 2 GiB per process.
const TARGET =
  o.size === 'xlarge'
    ? { ratio: 0.5, memoryMiB: 2048, syncSeconds: 600 }
    : { ratio: 0.5, memoryMiB: 1024, syncSeconds: 60 };
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

let cleaning: Promise<unknown> | undefined;
const cleanup = () => (cleaning ??= Promise.allSettled(openScratches().map((x) => x.close())));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: dropping scratch databases`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** One admin connection to the server (not a scratch database), for WAL positions and background pids. */
const admin = new pg.Client({ connectionString: testServerUrl() });
let backgroundPids: number[] = [];

async function walLsn(): Promise<string> {
  return (await admin.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
}
async function walBytes(from: string, to: string): Promise<number> {
  return Number(
    (await admin.query<{ d: string }>('select pg_wal_lsn_diff($2, $1)::text as d', [from, to])).rows[0]!.d,
  );
}
const cpuOf = (pids: number[]) => pids.reduce((a, pid) => a + (processCpuMs(pid) || 0), 0);
const clientCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Measure {
  wallMs: number;
  clientCpuMs: number;
  backendCpuMs: number;
  /** checkpointer, background writer and WAL writer: server-wide, shared with anything else running. */
  backgroundCpuMs: number;
  /** WAL generated, server-wide. */
  walBytes: number;
}

/** Times `fn` and what it cost: this process's CPU, its Postgres backend's, the background's, WAL. */
async function measured<T>(backendPid: number, fn: () => Promise<T>): Promise<{ value: T; m: Measure }> {
  const lsn = await walLsn();
  const [c0, b0, g0] = [clientCpu(), processCpuMs(backendPid), cpuOf(backgroundPids)];
  const t0 = performance.now();
  const value = await fn();
  const wallMs = performance.now() - t0;
  const m = {
    wallMs,
    clientCpuMs: clientCpu() - c0,
    backendCpuMs: processCpuMs(backendPid) - b0,
    backgroundCpuMs: cpuOf(backgroundPids) - g0,
    walBytes: await walBytes(lsn, await walLsn()),
  };
  return { value, m };
}

async function backendPid(db: Db): Promise<number> {
  return (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
}

async function setUpTenant(db: Db, label: string) {
  const tenant = await createTenant(db, { slug: `bench-${label}-${Date.now().toString(36)}`, tier: 'team' });
  const connection = await db
    .insertInto('cloud_connections')
    .values({
      tenant_id: tenant.id,
      kind: 'demo',
      config: JSON.stringify({ seed: spec.seed, size: spec.size }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { tenantId: tenant.id, connectionId: connection.id };
}

/** Flushes dirty buffers so that each timed phase starts from the same state. */
async function checkpoint(db: Db) {
  await sql`checkpoint`.execute(db);
}

/** Tuple counters are flushed by a backend when it goes idle, at most once a second: wait for it. */
async function countersAfter(db: Db, before: Awaited<ReturnType<typeof tupleCounters>>) {
  await new Promise((r) => setTimeout(r, 1500));
  const after = await tupleCounters(db);
  return Object.fromEntries(
    TABLES.map((t) => [
      t,
      {
        ins: (after[t]?.ins ?? 0) - (before[t]?.ins ?? 0),
        upd: (after[t]?.upd ?? 0) - (before[t]?.upd ?? 0),
        hot: (after[t]?.hot ?? 0) - (before[t]?.hot ?? 0),
        del: (after[t]?.del ?? 0) - (before[t]?.del ?? 0),
      },
    ]),
  );
}

function rowsWritten(r: SyncResult): number {
  return r.resources + r.edges + r.created + r.updated + r.deleted + r.metrics + r.costs + r.events;
}

function breakdownTable(phases: PhaseSummary[], tailMs: number, totalMs: number): string {
  const lines = phases.map((p) => [
    p.phase,
    String(p.statements),
    fmt(p.rows, 0),
    s(p.wall),
    s(p.gapFirst),
    s(p.gapRest),
    s(p.statementMs),
    s(p.clientCpu),
    s(p.serverCpu),
    `${((p.wall / totalMs) * 100).toFixed(1)} %`,
  ]);
  lines.push([
    'commit (after last statement)',
    '—',
    '—',
    s(tailMs),
    '—',
    '—',
    '—',
    '—',
    '—',
    `${((tailMs / totalMs) * 100).toFixed(1)} %`,
  ]);
  return markdownTable(
    [
      'phase',
      'stmts',
      'rows',
      'wall',
      'JS before 1st stmt',
      'JS between stmts',
      'in statements',
      '… client CPU',
      '… Postgres CPU',
      'share',
    ],
    lines,
  );
}

function measureText(m: Measure): string {
  return `wall ${s(m.wallMs)}; CPU: node ${s(m.clientCpuMs)}, Postgres backend ${s(m.backendCpuMs)}, Postgres background ${s(m.backgroundCpuMs)}; WAL ${fmt(m.walBytes / 2 ** 20, 0)} MiB`;
}

function memoryText(mem: MemoryReport, baselineRss: number): string {
  const lines = [
    `baseline RSS before generation: ${fmt(mib(baselineRss), 0)} MiB`,
    `peak RSS, kernel high-water mark (VmHWM): ${fmt(mib(mem.vmHwm), 0)} MiB`,
    `peak RSS, out-of-process 100 ms sampler: ${fmt(mib(mem.outOfProcess.rss), 0)} MiB (${mem.outOfProcess.samples} samples)`,
    `peak, in-process 100 ms process.memoryUsage(): rss ${fmt(mib(mem.inProcess.rss), 0)} MiB, heapUsed ${fmt(mib(mem.inProcess.heapUsed), 0)} MiB, heapTotal ${fmt(mib(mem.inProcess.heapTotal), 0)} MiB, external ${fmt(mib(mem.inProcess.external), 0)} MiB (${mem.inProcess.samples} samples; none can fire while a world or a part of one is built: that never yields)`,
    `peak heap used around any GC (V8 GC profiler): ${fmt(mib(mem.heapBeforeGc), 0)} MiB over ${mem.gcCount} GCs, ${s(mem.gcMs)} of GC`,
  ];
  for (const p of mem.phases)
    lines.push(
      `  ${p.phase}: ${s(p.ms)}, peak RSS ${fmt(mib(p.rss), 0)} MiB, peak heapUsed ${p.heapUsed === undefined ? 'n/a' : `${fmt(mib(p.heapUsed), 0)} MiB`} (${p.inProcessSamples} in-process samples)`,
    );
  return lines.join('\n');
}

async function main() {
  const results: Record<string, unknown> = {
    machine: {
      node: process.version,
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model,
      memory_gib: Math.round(os.totalmem() / 2 ** 30),
      load_at_start: os.loadavg(),
    },
    spec,
    options: { ...o, only: [...o.only] },
  };
  log(
    `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  await admin.connect();
  backgroundPids = (
    await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity where backend_type in ('checkpointer', 'background writer', 'walwriter')`,
    )
  ).rows.map((r) => r.pid);
  const server = await admin.query<{ name: string; setting: string; unit: string | null }>(
    `select name, setting, unit from pg_settings where name in ('shared_buffers', 'synchronous_commit', 'fsync', 'wal_level', 'max_wal_size', 'full_page_writes', 'wal_compression', 'server_version')`,
  );
  results.postgres = Object.fromEntries(
    server.rows.map((r) => [r.name, `${r.setting}${r.unit ? ` ${r.unit}` : ''}`]),
  );
  log(`postgres: ${server.rows.map((r) => `${r.name}=${r.setting}${r.unit ?? ''}`).join(', ')}`);

  // ---- 1. generation + sync into an empty tenant ------------------------------------------------------
  const a: Scratch = await createScratch(1);
  log(`scratch database ${a.name} (ours)`);
  const ta = await setUpTenant(a.db, 'ours');
  const book = await PriceBook.load(a.db);
  const trace = new QueryTrace();
  const traced = a.db.withPlugin(trace);
  await checkpoint(a.db);

  const liveHeap: Array<{ at: string; heapUsed: number; rss: number }> = [];
  if (o.liveHeap) {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const record = (at: string) => {
      gc();
      const m = process.memoryUsage();
      liveHeap.push({ at, heapUsed: m.heapUsed, rss: m.rss });
    };
    record('before generation');
    liveHeapBeforePhase = (phase) => record(`sync, before ${phase}`);
    liveHeapAfterGeneration = () => record('after generation');
  }
  const baselineRss = process.memoryUsage().rss;
  const watch = new MemoryWatch();
  watch.start('generate');
  const g0 = performance.now();
  const inventory = observeWorld(spec, book);
  const genMs = performance.now() - g0;
  liveHeapAfterGeneration?.();
  watch.mark('sync');
  log(
    `generated ${o.size}/${o.seed} in ${s(genMs)}: ${fmt(inventory.resources.length, 0)} resources, ${fmt(inventory.edges.length, 0)} edges, ${fmt(inventory.metrics.length, 0)} metric points, ${fmt(inventory.costs.length, 0)} cost lines, ${fmt(inventory.events.length, 0)} events`,
  );
  const pidA = await backendPid(a.db);
  // Per-phase memory peaks: a new memory phase at each phase of the sync (a cheap mark).
  trace.onPhase = (phase) => {
    liveHeapBeforePhase?.(phase);
    watch.mark(`sync: ${phase}`);
  };
  const syncLoad = [os.loadavg()[0]!];
  const countersA0 = await tupleCounters(a.db);
  const target = { tenantId: ta.tenantId, connectionId: ta.connectionId, scanId: null };
  trace.begin(pidA);
  const sync = await measured(pidA, () => syncInventory(traced, target, inventory, book));
  const tailMs = trace.finish();
  const mem = await watch.stop();
  trace.onPhase = undefined;
  if (o.liveHeap) {
    console.log(
      `live heap (after a forced full GC):\n${liveHeap.map((l) => `  ${l.at}: heapUsed ${fmt(mib(l.heapUsed), 0)} MiB, rss ${fmt(mib(l.rss), 0)} MiB`).join('\n')}`,
    );
  }
  syncLoad.push(os.loadavg()[0]!);
  const syncPhases = trace.summary();
  if ((await backendPid(a.db)) !== pidA) log('warning: the sync ran on another backend than measured');
  const result = sync.value;
  const rows = rowsWritten(result);
  const ourRate = rows / (sync.m.wallMs / 1000);
  const writtenA = await countersAfter(a.db, countersA0);
  log(
    `sync: ${s(sync.m.wallMs)}, ${fmt(rows, 0)} rows (${fmt(result.resources, 0)} resources, ${fmt(result.edges, 0)} edges, ${fmt(result.created + result.updated + result.deleted, 0)} history, ${fmt(result.metrics, 0)} metrics, ${fmt(result.costs, 0)} costs, ${fmt(result.events, 0)} events) = ${fmt(ourRate, 0)} rows/s`,
  );
  log(`sync cost: ${measureText(sync.m)}; load ${syncLoad.map((l) => l.toFixed(2)).join(' -> ')}`);
  console.log(memoryText(mem, baselineRss));
  console.log(`\nwhere the sync's time goes:\n${breakdownTable(syncPhases, tailMs, sync.m.wallMs)}\n`);
  results.generation = {
    ms: genMs,
    counts: {
      resources: inventory.resources.length,
      edges: inventory.edges.length,
      metrics: inventory.metrics.length,
      costs: inventory.costs.length,
      events: inventory.events.length,
    },
  };
  results.sync = {
    result,
    rows,
    rate: ourRate,
    measure: sync.m,
    tailMs,
    phases: syncPhases,
    tuples: writtenA,
    load: syncLoad,
  };
  results.memory = { baselineRss, ...mem, ...(o.liveHeap ? { liveHeap } : {}) };

  let ours: Record<string, TableChecksum> | undefined;
  if (o.verify) {
    ours = await checksums(a.db, ta.tenantId);
    log(`checksums of ours: ${TABLES.map((t) => `${t} ${fmt(ours![t]!.rows, 0)}`).join(', ')}`);
  }

  // ---- 3. re-sync of the unchanged environment --------------------------------------------------------
  if (o.only.has('resync')) {
    // By the next scan autovacuum has long visited the freshly loaded tables; do it now, so that it does
    // not run beside the timed re-sync on a 2-core machine, and so the planner has statistics.
    const v0 = performance.now();
    for (const t of TABLES) await sql`vacuum (analyze) ${sql.table(t)}`.execute(a.db);
    log(`vacuum (analyze) of the six tables: ${s(performance.now() - v0)}`);
    await checkpoint(a.db);
    const pid = await backendPid(a.db);
    const counters0 = await tupleCounters(a.db);
    const load = [os.loadavg()[0]!];
    trace.begin(pid);
    const resync = await measured(pid, () => syncInventory(traced, target, inventory, book));
    const resyncTail = trace.finish();
    load.push(os.loadavg()[0]!);
    const resyncPhases = trace.summary();
    const written = await countersAfter(a.db, counters0);
    const r = resync.value;
    log(
      `re-sync: ${s(resync.m.wallMs)}; created ${r.created}, updated ${r.updated}, deleted ${r.deleted}, unchanged ${fmt(r.unchanged, 0)}; new metrics ${r.metrics}, costs ${r.costs}, events ${r.events}`,
    );
    log(`re-sync cost: ${measureText(resync.m)}; load ${load.map((l) => l.toFixed(2)).join(' -> ')}`);
    log(
      `re-sync tuples written: ${TABLES.map((t) => `${t} ins ${written[t]!.ins} upd ${written[t]!.upd} (hot ${written[t]!.hot}) del ${written[t]!.del}`).join('; ')}`,
    );
    console.log(
      `\nwhere the re-sync's time goes:\n${breakdownTable(resyncPhases, resyncTail, resync.m.wallMs)}\n`,
    );
    results.resync = {
      result: r,
      measure: resync.m,
      tailMs: resyncTail,
      phases: resyncPhases,
      tuples: written,
      load,
    };
  }
  await a.close();

  // ---- 2. the raw baselines, each into a fresh scratch database ---------------------------------------
  const anyRaw = o.only.has('copy') || o.only.has('insert');
  // The raw side takes arrays (a whale's inventory is built as it is read: materialized here, untimed).
  const whole = anyRaw
    ? { ...inventory, resources: [...inventory.resources], edges: [...inventory.edges] }
    : { ...inventory, resources: [], edges: [], events: [] };
  const prepared = prepare(whole, book);
  if (new Set(whole.resources.map((r) => r.arn)).size !== whole.resources.length)
    throw new Error('duplicate ARNs: the raw rows would differ from the sync');
  log(
    `raw rows prepared (untimed): content hashes ${s(prepared.ms.hash)}, prices and console links ${s(prepared.ms.costAndUrl)}, edge filter ${s(prepared.ms.edges)}, event keys ${s(prepared.ms.dedupe)}`,
  );
  results.rawPrep = prepared.ms;

  // Each baseline writes the same rows; metrics and cost lines in the order the sync writes them (ARN
  // order, the fastest for these indexes), and COPY once more in the connector's order, for reference.
  const variants = [
    { name: 'copy', kind: 'copy', order: 'arn' },
    { name: 'copy-input-order', kind: 'copy', order: 'input' },
    { name: 'insert', kind: 'insert', order: 'arn' },
  ] as const;
  const raw: Record<
    string,
    {
      m: Measure;
      perTable: Record<string, number>;
      batch?: Record<string, number>;
      order: RowOrder;
      load: number[];
    }
  > = {};
  for (const variant of variants) {
    const { name, kind, order } = variant;
    if (!o.only.has(kind)) continue;
    const rowsInOrder = ordered(whole, order);
    const b = await createScratch(1);
    log(`scratch database ${b.name} (raw ${name})`);
    const tb = await setUpTenant(b.db, kind);
    await checkpoint(b.db);
    await b.db.destroy().catch(() => undefined);
    const client = new pg.Client({ connectionString: b.url, application_name: 'opsi-bench-raw' });
    await client.connect();
    try {
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      let tables: RawTable[] = [];
      let perTable: Record<string, number> = {};
      let batch: Record<string, number> | undefined;
      const load0 = os.loadavg()[0]!;
      const run = await measured(pid, async () => {
        await client.query('begin');
        // The snapshot row the history references, as the sync inserts it.
        const snap = await client.query<{ id: string }>(
          `insert into inventory_snapshots (tenant_id, connection_id, scan_id, observed_at, resource_count, edge_count)
           values ($1, $2, null, $3, $4, $5) returning id`,
          [
            tb.tenantId,
            tb.connectionId,
            inventory.observedAt,
            inventory.resources.length,
            prepared.edges.length,
          ],
        );
        tables = rawTables(whole, prepared, { ...tb, snapshotId: snap.rows[0]!.id }, rowsInOrder);
        if (kind === 'copy') perTable = await copyTables(client, tables);
        else ({ ms: perTable, batch } = await insertTables(client, tables, o.insertRows));
        await client.query('commit');
      });
      const count = tables.reduce((n, t) => n + t.count, 0);
      if (count !== rows) throw new Error(`raw ${name} wrote ${count} rows, the sync ${rows}`);
      log(
        `raw ${name}: ${s(run.m.wallMs)} = ${fmt(count / (run.m.wallMs / 1000), 0)} rows/s (${Object.entries(
          perTable,
        )
          .map(([t, ms]) => `${t} ${s(ms)}`)
          .join(', ')}); load ${load0.toFixed(2)} -> ${os.loadavg()[0]!.toFixed(2)}`,
      );
      log(`raw ${name} cost: ${measureText(run.m)}`);
      raw[name] = { m: run.m, perTable, order, load: [load0, os.loadavg()[0]!], ...(batch ? { batch } : {}) };
    } finally {
      await client.end();
    }
    if (o.verify && ours) {
      const verifyDb = createPostgresDatabase(b.url, { max: 1 });
      const theirs = await checksums(verifyDb.db, tb.tenantId);
      await verifyDb.close();
      const diff = differences(ours, theirs);
      if (diff.length) throw new Error(`raw ${name} rows differ from the sync's:\n${diff.join('\n')}`);
      log(`raw ${name}: every table's row count and row checksum equal the sync's`);
    }
    await b.close();
  }
  results.raw = raw;

  // ---- the table ----------------------------------------------------------------------------------------
  const copyRate = raw.copy ? rows / (raw.copy.m.wallMs / 1000) : undefined;
  const insertRate = raw.insert ? rows / (raw.insert.m.wallMs / 1000) : undefined;
  const copyInputRate = raw['copy-input-order']
    ? rows / (raw['copy-input-order'].m.wallMs / 1000)
    : undefined;
  const table: Row[] = [
    {
      metric: `generate ${o.size} demo (observeWorld, seed ${o.seed})`,
      unit: 's',
      ours: genMs / 1000,
      digits: 2,
    },
    {
      metric: `sync: total time, ${fmt(result.resources, 0)} resources (${fmt(rows, 0)} rows)`,
      unit: 's',
      ours: sync.m.wallMs / 1000,
      ...(raw.copy ? { raw: raw.copy.m.wallMs / 1000, rawLabel: 'COPY' } : {}),
      target: { kind: 'abs', direction: 'lower', value: TARGET.syncSeconds },
      digits: 2,
    },
    {
      metric: 'sync: rows/s vs raw COPY',
      unit: 'rows/s',
      ours: ourRate,
      ...(copyRate ? { raw: copyRate } : {}),
      target: { kind: 'ratio', direction: 'higher', value: TARGET.ratio },
      digits: 0,
    },
    {
      metric: 'sync: rows/s vs raw COPY, connector order (info)',
      unit: 'rows/s',
      ours: ourRate,
      ...(copyInputRate ? { raw: copyInputRate } : {}),
      digits: 0,
    },
    {
      metric: 'sync: rows per CPU-second (node + its Postgres backend) vs raw COPY (info)',
      unit: 'rows/s',
      ours: rows / ((sync.m.clientCpuMs + sync.m.backendCpuMs) / 1000),
      ...(raw.copy ? { raw: rows / ((raw.copy.m.clientCpuMs + raw.copy.m.backendCpuMs) / 1000) } : {}),
      digits: 0,
    },
    {
      metric: `sync: rows/s vs raw multi-row INSERT (${o.insertRows} rows/stmt)`,
      unit: 'rows/s',
      ours: ourRate,
      ...(insertRate ? { raw: insertRate } : {}),
      target: { kind: 'ratio', direction: 'higher', value: TARGET.ratio },
      digits: 0,
    },
    {
      metric: 'peak RSS, generation + sync (VmHWM)',
      unit: 'MiB',
      ours: mib(mem.vmHwm ?? mem.outOfProcess.rss),
      target: { kind: 'abs', direction: 'lower', value: TARGET.memoryMiB },
      digits: 0,
    },
    {
      metric: 'peak heap used, generation + sync (GC profiler)',
      unit: 'MiB',
      ours: mib(Math.max(mem.heapBeforeGc ?? 0, mem.inProcess.heapUsed)),
      target: { kind: 'abs', direction: 'lower', value: TARGET.memoryMiB },
      digits: 0,
    },
    {
      metric: 'peak RSS, 100 ms in-process samples',
      unit: 'MiB',
      ours: mib(mem.inProcess.rss),
      digits: 0,
    },
    {
      metric: 'peak heapUsed, 100 ms in-process samples',
      unit: 'MiB',
      ours: mib(mem.inProcess.heapUsed),
      digits: 0,
    },
  ];
  const resync = results.resync as { measure: Measure; result: SyncResult } | undefined;
  if (resync) {
    table.push({
      metric: 're-sync, unchanged environment: total time',
      unit: 's',
      ours: resync.measure.wallMs / 1000,
      digits: 2,
    });
    table.push({
      metric: 're-sync: WAL written (server-wide)',
      unit: 'MiB',
      ours: resync.measure.walBytes / 2 ** 20,
      digits: 0,
    });
  }
  table.push({
    metric: 'sync: WAL written (server-wide)',
    unit: 'MiB',
    ours: sync.m.walBytes / 2 ** 20,
    ...(raw.copy ? { raw: raw.copy.m.walBytes / 2 ** 20, rawLabel: 'COPY' } : {}),
    digits: 0,
  });
  results.table = table;
  console.log(`\n${renderResults(table)}\n`);
  if (o.json) writeFileSync(o.json, JSON.stringify(results, null, 2));
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(async () => {
    await cleanup();
    await admin.end().catch(() => undefined);
  });
