// `opsi --help` start time: `npm run bench:cli [-- --runs=30]`. Side by side in one run, alternating:
//   node        `node -e ""`, the floor every Node command pays
//   commander   a bare commander 14 program with as many commands, printing its help
//   opsi        the installable bundle (dist/opsi.js, as `npm pack` builds it) `--help`
//   opsi (src)  `node apps/cli/bin/opsi.js --help` in the repository: the TypeScript through tsx
// Wall time of each process from spawn to exit; median and p90 over the runs. See docs/performance.md.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { bundleCli } from '../../apps/cli/scripts/bundle';

const runsArg = process.argv.find((a) => a.startsWith('--runs='));
const RUNS = runsArg ? Number(runsArg.slice('--runs='.length)) : 30;
const REPO = fileURLToPath(new URL('../../', import.meta.url));

const dir = await mkdtemp(join(tmpdir(), 'opsi-bench-cli-'));
try {
  const bundle = await bundleCli(join(dir, 'dist'));
  const commanderPath = createRequire(import.meta.url).resolve('commander');
  const raw = join(dir, 'raw-commander.mjs');
  await writeFile(
    raw,
    `import { createRequire } from 'node:module';
const { Command } = createRequire(import.meta.url)(${JSON.stringify(commanderPath)});
const program = new Command('raw').option('--url <url>').option('--token <t>').option('--json');
for (let i = 0; i < 16; i++) program.command('command' + i).description('a command').option('--flag <v>').action(() => {});
program.parse();
`,
  );
  const sides: Array<{ name: string; args: string[] }> = [
    { name: 'node', args: ['-e', ''] },
    { name: 'commander', args: [raw, '--help'] },
    { name: 'opsi', args: [bundle, '--help'] },
    { name: 'opsi (src)', args: [join(REPO, 'apps/cli/bin/opsi.js'), '--help'] },
  ];
  const times = new Map(sides.map((s) => [s.name, [] as number[]]));
  for (const side of sides) spawnSync(process.execPath, side.args, { cwd: REPO }); // warm the disk cache
  for (let i = 0; i < RUNS; i++) {
    for (const side of sides) {
      const start = performance.now();
      const result = spawnSync(process.execPath, side.args, {
        cwd: REPO,
        env: { ...process.env, NO_COLOR: '1' },
      });
      const ms = performance.now() - start;
      if (result.status !== 0) throw new Error(`${side.name} exited ${result.status}: ${result.stderr}`);
      times.get(side.name)!.push(ms);
    }
  }
  const pct = (xs: number[], p: number) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  };
  const nodeMedian = pct(times.get('node')!, 50);
  const commanderMedian = pct(times.get('commander')!, 50);
  console.warn(`opsi --help start time, ${RUNS} runs per side, alternating (ms, wall clock)`);
  console.warn('side         median    p90   ×node  ×commander');
  for (const side of sides) {
    const xs = times.get(side.name)!;
    const median = pct(xs, 50);
    console.warn(
      `${side.name.padEnd(11)} ${median.toFixed(0).padStart(7)} ${pct(xs, 90).toFixed(0).padStart(6)} ${(median / nodeMedian).toFixed(2).padStart(7)} ${(median / commanderMedian).toFixed(2).padStart(11)}`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
