// Cold start and idle memory of the API process, compiled JavaScript (apps/api/dist/main.js, what
// production runs since `npm run build`) beside the same sources run through tsx (what production ran
// before, and what development runs). `npm run bench:startup`; docs/performance.md records the numbers.
//
// Each run spawns a fresh `node` process against one scratch database and Redis prefix, with
// NODE_ENV=production on both sides, and measures:
//   - cold start: from spawn to the first 200 of GET /readyz (polled every 10 ms);
//   - idle RSS: VmRSS of the process (Linux /proc) after it has sat idle for --idle seconds.
// Sides alternate run by run (tsx, compiled, tsx, …) so that a noisy neighbour hurts both alike.
// Options: --runs=5 (per side), --idle=3 (seconds).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '@opsi/test-support';
import { createScratch } from '../pulse/lib/scratch';
import { median, sleep } from '../runs/lib/stats';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const arg = (name: string, fallback: number) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.split('=')[1]) : fallback;
};
const RUNS = arg('runs', 5);
const IDLE_S = arg('idle', 3);

const SIDES = {
  tsx: ['--import', 'tsx', 'apps/api/src/main.ts'],
  compiled: ['--enable-source-maps', 'apps/api/dist/main.js'],
} as const;
type Side = keyof typeof SIDES;

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]);
  return kb / 1024;
}

async function once(side: Side, env: Record<string, string>) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...SIDES[side]], {
    cwd: ROOT,
    env: {
      SECRETS_KEY: 'bench-only-secrets-key-0123456789abcdef',
      ...process.env,
      ...env,
      PORT: String(port),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${side} exited before ready:\n${stderr}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) break;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 120_000) throw new Error(`${side} not ready in 120 s:\n${stderr}`);
      await sleep(10);
    }
    const coldMs = performance.now() - started;
    await sleep(IDLE_S * 1000);
    return { coldMs, rss: rssMiB(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const build = spawn(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
await new Promise((r) => build.once('exit', r));
const scratch = await createScratch(2);
try {
  const env = { DATABASE_URL: scratch.url, REDIS_URL: scratch.redisUrl, REDIS_PREFIX: scratch.redisPrefix };
  const results: Record<Side, { coldMs: number; rss: number }[]> = { tsx: [], compiled: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const side of (i % 2 ? ['compiled', 'tsx'] : ['tsx', 'compiled']) as Side[]) {
      const r = await once(side, env);
      results[side].push(r);
      console.warn(
        `run ${i + 1} ${side}: ready in ${r.coldMs.toFixed(0)} ms, idle RSS ${r.rss.toFixed(1)} MiB`,
      );
    }
  }
  const summary = (side: Side) => {
    const cold = results[side].map((r) => r.coldMs);
    const rss = results[side].map((r) => r.rss);
    return {
      coldMedian: median(cold),
      coldMin: Math.min(...cold),
      coldMax: Math.max(...cold),
      rssMedian: median(rss),
      rssMin: Math.min(...rss),
      rssMax: Math.max(...rss),
    };
  };
  const t = summary('tsx');
  const c = summary('compiled');
  const line = (name: string, s: ReturnType<typeof summary>) =>
    `| ${name} | ${s.coldMedian.toFixed(0)} ms (${s.coldMin.toFixed(0)}–${s.coldMax.toFixed(0)}) | ${s.rssMedian.toFixed(1)} MiB (${s.rssMin.toFixed(1)}–${s.rssMax.toFixed(1)}) |`;
  console.log(`\n${RUNS} runs per side, idle ${IDLE_S} s, ${new Date().toISOString()}\n`);
  console.log('| API process | cold start to /readyz, median (min–max) | idle RSS, median (min–max) |');
  console.log('|---|---|---|');
  console.log(line('tsx (`node --import tsx apps/api/src/main.ts`)', t));
  console.log(line('compiled (`node apps/api/dist/main.js`)', c));
  console.log(
    `| compiled / tsx | ${(c.coldMedian / t.coldMedian).toFixed(2)} | ${(c.rssMedian / t.rssMedian).toFixed(2)} |`,
  );
} finally {
  await scratch.close();
}
