import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { drillsUnavailable } from '../test/support/drills';
import { REPO_ROOT } from '../test/support/processes';
import { startStack, type Stack } from '../test/support/stack';
import { drillContext } from './lib/context';
import { DRILLS } from './lib/registry';
import { textTable, writeReport } from './lib/report';
import type { DrillRow } from './lib/types';

// npm run drills [-- --quick] [--only a,b] [--no-write] [--write] [--json]
// Starts a stack of its own (Postgres and Redis on free loopback ports; API x2, worker x2, scheduler),
// runs every drill against it, prints the table, writes docs/reliability.md (full runs), and exits
// non-zero when any target is missed. Bounded: each drill has a time limit, and the whole run too.

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const quick = flag('quick');
const json = flag('json');
const onlyArg = argv.find((a) => a.startsWith('--only'));
const only = onlyArg
  ? (onlyArg.includes('=') ? onlyArg.split('=')[1]! : (argv[argv.indexOf(onlyArg) + 1] ?? '')).split(',')
  : undefined;
// Full runs record their figures; quick runs (the e2e test) and partial runs do not, unless told.
const write = flag('write') || (!quick && !only && !flag('no-write'));
const TOTAL_BOUND_MS = quick ? 6 * 60_000 : 14 * 60_000;

const out = (line: string) => console.error(line);

async function main(): Promise<number> {
  const unknown = only?.filter((n) => !DRILLS.some((d) => d.name === n));
  if (unknown?.length) {
    out(`unknown drill(s): ${unknown.join(', ')}; known: ${DRILLS.map((d) => d.name).join(', ')}`);
    return 2;
  }
  const why = drillsUnavailable();
  if (why) {
    out(`drills cannot run here: ${why}`);
    return 2;
  }
  const startedAt = new Date();
  const load = loadavg();
  out(`drills (${quick ? 'quick' : 'full'}): load average ${load.map((l) => l.toFixed(2)).join(' ')}`);
  out('starting the stack: Postgres, Redis, API x2, worker x2, scheduler ...');
  let stack: Stack | undefined;
  const stop = async () => {
    const s = stack;
    stack = undefined;
    await s?.close().catch((e) => out(`closing the stack: ${String(e)}`));
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      out(`${sig}: stopping the stack`);
      void stop().then(() => process.exit(130));
    });
  const rows: DrillRow[] = [];
  const overall = AbortSignal.timeout(TOTAL_BOUND_MS);
  try {
    // Every drill's traffic comes from 127.0.0.1: the per-address sign-in limit would lock the one
    // address out after the hostile drill's junk sign-ins (the per-account limit still applies).
    stack = await startStack({ apis: 2, workers: 2, env: { LOGIN_MAX_FAILURES_PER_ADDRESS: '100000' } });
    out(`stack ready in ${Math.round((Date.now() - startedAt.getTime()) / 1000)} s`);
    for (const entry of DRILLS.filter((d) => !only || only.includes(d.name))) {
      if (overall.aborted) {
        rows.push({
          drill: entry.name,
          measure: 'ran',
          value: 'not run: overall bound',
          target: 'ran',
          pass: false,
        });
        continue;
      }
      const { drill } = await entry.load();
      const bound = drill.timeoutMs ?? (quick ? 90_000 : 240_000);
      const controller = new AbortController();
      const signal = AbortSignal.any([controller.signal, overall]);
      out(`\n[${drill.name}] ${drill.description ?? ''}`);
      const t0 = Date.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        const timedOut = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            controller.abort();
            reject(new Error(`overran its bound of ${bound} ms`));
          }, bound);
        });
        const result = await Promise.race([drill.run(drillContext(stack, { quick, signal })), timedOut]);
        rows.push(...result);
        for (const r of result)
          out(`  ${r.pass ? 'ok  ' : 'FAIL'} ${r.measure}: ${r.value} (target ${r.target})`);
      } catch (e) {
        controller.abort();
        const detail = e instanceof Error ? e.message : String(e);
        out(`  FAIL ${drill.name} threw: ${e instanceof Error ? e.stack : detail}`);
        rows.push({
          drill: drill.name,
          measure: 'completed',
          value: `error: ${detail.slice(0, 120)}`,
          target: 'completes',
          pass: false,
        });
      } finally {
        clearTimeout(timer);
      }
      out(`  (${Math.round((Date.now() - t0) / 1000)} s)`);
    }
  } catch (e) {
    out(`the stack failed: ${e instanceof Error ? e.stack : String(e)}`);
    rows.push({ drill: 'stack', measure: 'started', value: 'error', target: 'starts', pass: false });
  } finally {
    out('\nstopping the stack ...');
    await stop();
  }
  const wallMs = Date.now() - startedAt.getTime();
  if (json) process.stdout.write(`${JSON.stringify({ quick, wall_ms: wallMs, load, rows })}\n`);
  else process.stdout.write(`\n${textTable(rows)}\n\n`);
  const failed = rows.filter((r) => !r.pass);
  if (write) {
    const file = join(REPO_ROOT, 'docs/reliability.md');
    writeReport(file, rows, {
      mode: quick ? 'quick' : only ? `only ${only.join(',')}` : 'full',
      startedAt,
      wallMs,
      load,
      cores: cpus().length,
      node: process.version,
    });
    out(`figures written to docs/reliability.md`);
  }
  out(`${rows.length - failed.length}/${rows.length} targets met in ${Math.round(wallMs / 1000)} s`);
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
