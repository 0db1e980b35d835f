import { readFileSync } from 'node:fs';
import { sql } from '@opsi/db';
import type { Scratch } from './env';

// Linux clock ticks per second (USER_HZ); 100 on every mainstream kernel.
const TICK_MS = 10;

/** CPU time (user + system, all threads) a process has used so far, in ms; undefined if unreadable. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state, field 3; utime is 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

export type CpuSnapshot = Map<string, Map<number, number>>;

/**
 * Takes CPU snapshots of named groups of processes; `since` answers the ms each group used in between.
 * A process that appears only in the later snapshot counts from zero (it started in between).
 */
export class CpuMeter {
  constructor(private readonly groups: () => Promise<Record<string, number[]>>) {}

  async snapshot(): Promise<CpuSnapshot> {
    const snap: CpuSnapshot = new Map();
    for (const [name, pids] of Object.entries(await this.groups())) {
      const m = new Map<number, number>();
      for (const pid of pids) {
        const ms = pid === process.pid ? cpuOfSelf() : processCpuMs(pid);
        if (ms !== undefined) m.set(pid, ms);
      }
      snap.set(name, m);
    }
    return snap;
  }

  async since(before: CpuSnapshot): Promise<Record<string, number>> {
    const after = await this.snapshot();
    const out: Record<string, number> = {};
    for (const [name, m] of after) {
      let total = 0;
      for (const [pid, ms] of m) total += ms - (before.get(name)?.get(pid) ?? 0);
      out[name] = total;
    }
    return out;
  }
}

function cpuOfSelf(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU ms by process group, and their sum. */
export function cpuText(cpu: Record<string, number> | undefined): string {
  if (!cpu) return 'n/a';
  const parts = Object.entries(cpu).map(([k, v]) => `${k} ${v.toFixed(2)}`);
  return `${parts.join(', ')}; sum ${Object.values(cpu)
    .reduce((a, b) => a + b, 0)
    .toFixed(2)} ms`;
}

/**
 * A CPU meter over the given processes plus the scratch database's Postgres backends, the Redis server
 * (when it runs on this machine; shared with anything else using it) and this process (the client).
 */
export function cpuMeterFor(s: Scratch) {
  const database = new URL(s.databaseUrl).pathname.slice(1);
  const redisHost = new URL(s.redisUrl).hostname;
  let redisPid: Promise<number | undefined> | undefined;
  return (groups: Record<string, number[]>) =>
    new CpuMeter(async () => {
      const backends = await sql<{
        pid: number;
      }>`select pid from pg_stat_activity where datname = ${database}`.execute(s.db);
      redisPid ??= ['127.0.0.1', 'localhost', '::1'].includes(redisHost)
        ? s.redis.info('server').then((info) => Number(/process_id:(\d+)/.exec(info)?.[1]) || undefined)
        : Promise.resolve(undefined);
      const redis = await redisPid;
      return {
        ...groups,
        Postgres: backends.rows.map((r) => r.pid),
        Redis: redis ? [redis] : [],
        client: [process.pid],
      };
    });
}
