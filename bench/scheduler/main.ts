// `npm run bench:scheduler`: the nightly scans of 10,000 tenants (`--tenants N`) in a realistic mix of
// timezones, scheduled by the real reconciliation into BullMQ on a scratch database and Redis prefix.
// Prints how long a first pass (every scheduler new) and a second pass (nothing to change) take, and
// the night as a histogram of scan starts per 10 minutes in UTC, beside what the former fixed 02:00
// local would have started. `--json` prints the figures as JSON.
import { sql } from 'kysely';
import { JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import { reconcileSchedules } from '../../apps/scheduler/src/reconcile';
import { createScratch } from '../runs/lib/env';

const args = process.argv.slice(2);
const TENANTS = Number(args[args.indexOf('--tenants') + 1]) || 10_000;
const JSON_OUT = args.includes('--json');

/** Share of tenants per timezone: most in UTC, then the Americas, Europe and Asia-Pacific. */
const ZONES: Array<[string, number]> = [
  ['UTC', 0.3],
  ['America/New_York', 0.15],
  ['Europe/Berlin', 0.15],
  ['America/Los_Angeles', 0.1],
  ['Europe/London', 0.1],
  ['Asia/Kolkata', 0.05],
  ['Asia/Tokyo', 0.05],
  ['Australia/Sydney', 0.05],
  ['America/Sao_Paulo', 0.05],
];

const scratch = await createScratch();
const producer = new JobProducer(createRedis(scratch.redisUrl, 'producer'), scratch.redisPrefix);
try {
  let i = 0;
  for (const [zone, share] of ZONES) {
    const n = Math.round(TENANTS * share);
    await sql`insert into tenants (slug, name, timezone)
      select 'bench-' || g, 'bench ' || g, ${zone} from generate_series(${i}::int, ${i + n - 1}::int) g`.execute(
      scratch.db,
    );
    i += n;
  }
  const t0 = performance.now();
  const first = await reconcileSchedules(scratch.db, producer);
  const firstMs = performance.now() - t0;
  const t1 = performance.now();
  const second = await reconcileSchedules(scratch.db, producer);
  const secondMs = performance.now() - t1;

  const scans = (await producer.queue('pulse').getJobSchedulers(0, -1)).filter((s) =>
    s.key.startsWith('nightly-scan:'),
  );
  // The next run of each, from a common instant: BullMQ computed `next` when it upserted them.
  const starts = scans.map((s) => s.next!).sort((a, b) => a - b);
  const zoneOf = new Map(scans.map((s) => [s.key, s.tz!]));
  // What the former pattern (every tenant at 02:00 local) started, for the same tenants and night.
  const dayStart = Math.floor(starts[0]! / 86_400_000) * 86_400_000;
  const former = [...zoneOf.values()].map((tz) => localTwoAm(dayStart, tz));

  const perMinute = (xs: number[]) => {
    const m = new Map<number, number>();
    for (const x of xs) m.set(Math.floor(x / 60_000), (m.get(Math.floor(x / 60_000)) ?? 0) + 1);
    return Math.max(...m.values());
  };
  const perSecond = (xs: number[]) => {
    const m = new Map<number, number>();
    for (const x of xs) m.set(Math.floor(x / 1000), (m.get(Math.floor(x / 1000)) ?? 0) + 1);
    return Math.max(...m.values());
  };
  const figures = {
    tenants: scans.length,
    first_pass: { upserted: first.upserted.length, ms: Math.round(firstMs) },
    second_pass: { upserted: second.upserted.length, ms: Math.round(secondMs) },
    spread: { max_per_minute: perMinute(starts), max_per_second: perSecond(starts) },
    former_0200: { max_per_minute: perMinute(former), max_per_second: perSecond(former) },
  };
  if (JSON_OUT) {
    console.log(JSON.stringify(figures, null, 2));
  } else {
    console.log(
      `${figures.tenants} tenants: first pass ${figures.first_pass.upserted} schedulers in ${figures.first_pass.ms} ms, ` +
        `second pass ${figures.second_pass.upserted} in ${figures.second_pass.ms} ms`,
    );
    console.log(
      `scan starts, most in one minute / one second: spread ${figures.spread.max_per_minute} / ${figures.spread.max_per_second}; ` +
        `former 02:00 local ${figures.former_0200.max_per_minute} / ${figures.former_0200.max_per_second}`,
    );
    console.log('\nscan starts per 10 minutes of the day (UTC), one # per 10 tenants:');
    const buckets = new Map<number, number>();
    for (const x of starts) {
      const b = Math.floor((x % 86_400_000) / 600_000);
      buckets.set(b, (buckets.get(b) ?? 0) + 1);
    }
    for (let b = 0; b < 144; b++) {
      const n = buckets.get(b) ?? 0;
      const hhmm = `${String(Math.floor(b / 6)).padStart(2, '0')}:${b % 6}0`;
      console.log(`  ${hhmm} ${String(n).padStart(4)} ${'#'.repeat(Math.round(n / 10))}`);
    }
  }
} finally {
  await producer.close();
  await scratch.close();
}

/** 02:00 local time in `tz` on the UTC day starting at `dayStartMs` (or the day after, once past). */
function localTwoAm(dayStartMs: number, tz: string): number {
  for (let h = 0; h < 48; h++) {
    const at = dayStartMs + h * 3_600_000;
    const hour = Number(
      new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', hourCycle: 'h23' }).format(at),
    );
    if (hour === 2) return at;
  }
  throw new Error(`no 02:00 in ${tz}`);
}
