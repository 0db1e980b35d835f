import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { GCProfiler } from 'node:v8';

const MiB = 2 ** 20;

// Runs in a separate process: reads this process's resident set from /proc every 100 ms, so RSS is
// sampled even while the main thread is busy in synchronous code (collectWorld never yields).
const SAMPLER = `
const fs = require('node:fs');
const pid = process.argv[1];
const samples = [];
const read = () => {
  try {
    const m = /VmRSS:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/' + pid + '/status', 'utf8'));
    if (m) samples.push([Date.now(), Number(m[1]) * 1024]);
  } catch {}
};
read();
const timer = setInterval(read, 100);
process.stdin.resume();
process.stdin.on('end', () => {
  clearInterval(timer);
  read();
  process.stdout.write(JSON.stringify(samples));
});
`;

export interface MemorySample {
  at: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export interface PhasePeak {
  phase: string;
  ms: number;
  /** Highest RSS the out-of-process sampler saw in this phase, bytes. */
  rss: number;
  /** Highest heapUsed the in-process sampler saw in this phase (none while the thread never yields). */
  heapUsed: number | undefined;
  /** Samples the in-process timer managed to take in this phase. */
  inProcessSamples: number;
}

export interface MemoryReport {
  /** Max of the 100 ms in-process process.memoryUsage() samples. */
  inProcess: { rss: number; heapUsed: number; heapTotal: number; external: number; samples: number };
  /** Max of the 100 ms out-of-process /proc samples. */
  outOfProcess: { rss: number; samples: number };
  /** The kernel's high-water mark of RSS (VmHWM) over the window: the exact peak. */
  vmHwm: number | undefined;
  /** The highest used heap V8 reported just before any garbage collection in the window. */
  heapBeforeGc: number | undefined;
  gcCount: number;
  gcMs: number;
  phases: PhasePeak[];
}

function vmHwm(): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Watches this process's memory over a window: an in-process 100 ms process.memoryUsage() sampler
 * (as asked; it cannot fire during synchronous code), an out-of-process 100 ms RSS sampler, the
 * kernel's peak RSS (VmHWM, reset at start), and V8's GC profiler for the heap just before each GC.
 */
export class MemoryWatch {
  private samples: MemorySample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private child: ChildProcessWithoutNullStreams | undefined;
  private childOut = '';
  private gc = new GCProfiler();
  private marks: Array<{ phase: string; at: number }> = [];

  start(phase: string): void {
    try {
      // "5" resets the peak RSS (VmHWM) to the current RSS (Linux >= 4.0).
      writeFileSync('/proc/self/clear_refs', '5');
    } catch {
      // Not Linux, or not allowed: VmHWM then covers the process's whole life.
    }
    this.child = spawn(process.execPath, ['-e', SAMPLER, String(process.pid)], { stdio: 'pipe' });
    this.child.stdout.on('data', (d: Buffer) => (this.childOut += d.toString()));
    this.gc.start();
    this.mark(phase);
    this.sample();
    this.timer = setInterval(() => this.sample(), 100);
  }

  private sample(): void {
    const m = process.memoryUsage();
    this.samples.push({
      at: Date.now(),
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
    });
  }

  /** Starts a new phase (for per-phase peaks). */
  mark(phase: string): void {
    this.marks.push({ phase, at: Date.now() });
  }

  async stop(): Promise<MemoryReport> {
    this.sample();
    const end = Date.now();
    clearInterval(this.timer);
    const hwm = vmHwm();
    const gc = this.gc.stop();
    const child = this.child!;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin.end();
    await exited;
    const outside = JSON.parse(this.childOut || '[]') as Array<[number, number]>;
    const max = (values: number[]) => values.reduce((a, b) => Math.max(a, b), 0);
    const phases = this.marks.map((m, i): PhasePeak => {
      const until = this.marks[i + 1]?.at ?? end + 1;
      const inside = this.samples.filter((s) => s.at >= m.at && s.at < until);
      return {
        phase: m.phase,
        ms: until - m.at,
        rss: max([
          ...outside.filter(([at]) => at >= m.at && at < until).map(([, rss]) => rss),
          ...inside.map((s) => s.rss),
        ]),
        heapUsed: inside.length ? max(inside.map((s) => s.heapUsed)) : undefined,
        inProcessSamples: inside.length,
      };
    });
    const stats = gc?.statistics ?? [];
    return {
      inProcess: {
        rss: max(this.samples.map((s) => s.rss)),
        heapUsed: max(this.samples.map((s) => s.heapUsed)),
        heapTotal: max(this.samples.map((s) => s.heapTotal)),
        external: max(this.samples.map((s) => s.external)),
        samples: this.samples.length,
      },
      outOfProcess: { rss: max(outside.map(([, rss]) => rss)), samples: outside.length },
      vmHwm: hwm,
      heapBeforeGc: stats.length
        ? max(
            stats.map((s) =>
              Math.max(s.beforeGC.heapStatistics.usedHeapSize, s.afterGC.heapStatistics.usedHeapSize),
            ),
          )
        : undefined,
      gcCount: stats.length,
      gcMs: stats.reduce((a, s) => a + s.cost, 0) / 1000,
      phases,
    };
  }
}

export const mib = (bytes: number | undefined) => (bytes === undefined ? NaN : bytes / MiB);
