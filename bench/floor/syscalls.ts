// System calls per stream turn, ours against the floor: `npx tsx bench/floor/syscalls.ts [--turns=200]`.
// Starts the real API and worker and the stream floor (bench/floor/stream.ts) on a scratch database, warms
// both, then for each side attaches `strace -c -f` to its two processes for --turns sequential turns and
// prints the calls per turn by name. strace slows what it traces, so times here mean nothing; the counts
// are what the CPU per turn of docs/performance.md is made of (each socket write also wakes its reader).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createTenantWithUser, mintTestToken } from '@opsi/test-support';
import { latencyOurs } from '../runs/latency';
import { createScratch, liveServices, startApiAndWorker, type Scratch } from '../runs/lib/env';
import { sleep } from '../runs/lib/stats';
import { startStreamFloor } from './start';

const turns = Number(process.argv.find((a) => a.startsWith('--turns='))?.slice(8) ?? 200);
/** --writes: also print every write of ours' and the floor's API and worker during two turns. */
const showWrites = process.argv.includes('--writes');

/** strace -c's summary table: calls by system call name. */
function parseSummary(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== 'total') calls.set(m[2]!, Number(m[1]));
  }
  return calls;
}

/** Each write and writev of the processes during `fn`, with the first bytes written. */
async function writes(pids: number[], fn: () => Promise<unknown>): Promise<string> {
  const out = join(os.tmpdir(), `opsi-strace-writes-${process.pid}.txt`);
  const args = ['-f', '-e', 'trace=write,writev', '-s', '48', '-o', out];
  const child = spawn('strace', [...args, ...pids.flatMap((p) => ['-p', String(p)])], { stdio: 'ignore' });
  await sleep(1000);
  await fn();
  child.kill('SIGINT');
  await once(child, 'exit');
  return readFileSync(out, 'utf8');
}

/** Calls by name of each process (strace -c -f on each, all attached during `fn`). */
async function traced(pids: number[], fn: () => Promise<unknown>): Promise<Array<Map<string, number>>> {
  const runs = pids.map((pid) => {
    const out = join(os.tmpdir(), `opsi-strace-${process.pid}-${pid}.txt`);
    const child = spawn('strace', ['-c', '-f', '-o', out, '-p', String(pid)], { stdio: 'ignore' });
    return { out, child, exited: once(child, 'exit') };
  });
  await sleep(1000); // attached
  await fn();
  for (const r of runs) r.child.kill('SIGINT');
  await Promise.all(runs.map((r) => r.exited));
  return runs.map((r) => parseSummary(readFileSync(r.out, 'utf8')));
}

let scratch: Scratch | undefined;
try {
  scratch = await createScratch();
  const s = scratch;
  const member = await createTenantWithUser(s, { budget: 1_000_000 });
  const { token } = await mintTestToken(s, member, 'read_write');
  const ours = await startApiAndWorker(s, {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    AGENT_ENGINE: 'scripted',
    WORKER_QUEUES: 'agent',
    WORKER_CONCURRENCY_AGENT: '8',
  });
  const floor = await startStreamFloor(s, {
    tenantId: member.tenant.id,
    userId: member.user.id,
    concurrency: 8,
  });
  for (const url of [ours.url, floor.url]) await latencyOurs(url, token, { n: 0, warmup: 50 });
  const sides = {
    ours: await traced([ours.api.child.pid!, ours.worker.child.pid!], () =>
      latencyOurs(ours.url, token, { n: turns, warmup: 0 }),
    ),
    floor: await traced([floor.api.child.pid!, floor.worker.child.pid!], () =>
      latencyOurs(floor.url, token, { n: turns, warmup: 0 }),
    ),
  };
  const table = (title: string, a: Map<string, number>, b: Map<string, number>) => {
    const names = [...new Set([...a.keys(), ...b.keys()])];
    const rows = names
      .map((n) => [n, (a.get(n) ?? 0) / turns, (b.get(n) ?? 0) / turns] as const)
      .filter(([, x, y]) => x >= 0.2 || y >= 0.2)
      .sort((x, y) => y[1] - x[1]);
    const total = (m: Map<string, number>) => [...m.values()].reduce((v, w) => v + w, 0) / turns;
    console.log(`\n${title}: system calls per turn (${turns} sequential turns per side, strace -c -f)`);
    console.log(`${'call'.padEnd(20)} ${'ours'.padStart(8)} ${'floor'.padStart(8)}`);
    for (const [n, x, y] of rows)
      console.log(`${n.padEnd(20)} ${x.toFixed(1).padStart(8)} ${y.toFixed(1).padStart(8)}`);
    console.log(`${'all'.padEnd(20)} ${total(a).toFixed(1).padStart(8)} ${total(b).toFixed(1).padStart(8)}`);
  };
  if (showWrites) {
    for (const [name, side] of [
      ['ours', ours],
      ['floor', floor],
    ] as const) {
      const pids = [side.api.child.pid!, side.worker.child.pid!];
      const text = await writes(pids, () => latencyOurs(side.url, token, { n: 2, warmup: 0 }));
      console.log(`\n${name}: writes of API (${pids[0]}) and worker (${pids[1]}) during two turns\n${text}`);
    }
  }
  table('API', sides.ours[0]!, sides.floor[0]!);
  table('worker', sides.ours[1]!, sides.floor[1]!);
} finally {
  await Promise.allSettled(liveServices().map((x) => x.stop(5000)));
  await scratch?.close();
}
process.exit(0);
