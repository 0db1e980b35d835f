import { createHash } from 'node:crypto';
import type { CostLine, InventoryResource, MetricPoint, RowSource } from '../model';
import { HOURS_PER_MONTH, monthlyCost, PriceBook } from '../pricing';
import type { Seeded } from './seeded';
import { WorldBuilder, type DemoSpec } from './world';

export const METRIC_WINDOW_DAYS = 30;

/** A stable pseudo-random number in [0, 1) per (resource, metric, day): the same in every re-scan. */
function noiseFactory(seed: number) {
  return (arn: string, metric: string) => {
    const base = createHash('sha1').update(`${seed}|${arn}|${metric}`).digest().readUInt32BE(0);
    return (day: number) => {
      // splitmix32 of the base and the day: cheap, well mixed, deterministic.
      let z = (base + Math.imul(day + 100_000, 0x9e3779b9)) >>> 0;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
    };
  };
}

const round = (v: number, places = 2) => Math.round(v * 10 ** places) / 10 ** places;

/**
 * The window's days, oldest first: each day's YYYY-MM-DD (one string per day, shared by every point of
 * that day rather than rebuilt per point) and the end of the day in ms.
 */
function windowDays(w: WorldBuilder): Array<{ day: number; date: string; endMs: number }> {
  const days = [];
  for (let day = w.spec.day - METRIC_WINDOW_DAYS; day < w.spec.day; day++)
    days.push({ day, date: w.at(day).toISOString().slice(0, 10), endMs: w.at(day + 1).getTime() });
  return days;
}

/** When a resource was created (ms), or undefined when it does not say: then it existed all along. */
function createdMs(r: InventoryResource): number | undefined {
  const created = (r.attributes.launch_time ??
    r.attributes.create_time ??
    r.attributes.creation_date ??
    r.attributes.start_time) as string | undefined;
  return created ? Date.parse(created) : undefined;
}

/** Whether a resource created at `created` existed on a day (ending at `endMs`). */
const existedOn = (created: number | undefined, endMs: number) => created === undefined || created < endMs;

/** One metric of a resource: its name and its value on a day, given the day's noise in [0, 1). */
interface Series {
  metric: string;
  value: (day: number, x: number) => { avg: number | null; max: number | null; sum: number | null };
}

/** The metrics a resource reports, with the seeded shapes (see demoMetrics). */
function seriesOf(r: InventoryResource, s: Seeded): Series[] {
  switch (r.type) {
    case 'aws_ec2_instance': {
      if (r.attributes.instance_state !== 'running') return []; // a stopped instance reports nothing
      if (r.arn === s.reportingWorker.arn)
        return [
          {
            metric: 'CPUUtilization',
            value: (_d, x) => ({ avg: 1 + x * 1.5, max: 2.5 + x * 2, sum: null }),
          },
        ];
      return [
        { metric: 'CPUUtilization', value: (_d, x) => ({ avg: 22 + x * 30, max: 45 + x * 40, sum: null }) },
      ];
    }
    case 'aws_rds_db_instance': {
      const idle = r.arn === s.reportingDb.arn;
      const spiking = r.arn === s.paymentsDb.arn;
      return [
        {
          metric: 'CPUUtilization',
          value: (day, x) =>
            idle
              ? { avg: 2 + x, max: 3 + x * 1.5, sum: null }
              : spiking && day === -1
                ? { avg: 78 + x * 6, max: 97 + x * 2, sum: null }
                : { avg: 18 + x * 20, max: 40 + x * 25, sum: null },
        },
        {
          metric: 'DatabaseConnections',
          value: (day, x) =>
            idle
              ? { avg: 0, max: 0, sum: null }
              : spiking && day === -1
                ? { avg: 310 + x * 40, max: 480 + x * 20, sum: null }
                : { avg: 40 + x * 60, max: 110 + x * 60, sum: null },
        },
      ];
    }
    case 'aws_vpc_nat_gateway': {
      const idle = r.arn === s.natIdle.arn;
      return [
        {
          metric: 'BytesOutToDestination',
          value: (_d, x) => ({ avg: null, max: null, sum: idle ? 0 : Math.round((20 + x * 40) * 1024 ** 3) }),
        },
      ];
    }
    case 'aws_ec2_application_load_balancer': {
      const empty = (r.attributes.target_group_arns as string[]).length === 0;
      const spiking = r.arn === s.checkoutAlb.arn;
      return [
        {
          metric: 'RequestCount',
          value: (_d, x) => ({ avg: null, max: null, sum: empty ? 0 : Math.round(400_000 + x * 900_000) }),
        },
        {
          metric: 'HTTPCode_ELB_5XX_Count',
          value: (day, x) => ({
            avg: null,
            max: null,
            sum: empty ? 0 : spiking && day === -1 ? 1800 + Math.round(x * 400) : Math.round(x * 6),
          }),
        },
      ];
    }
    default:
      return [];
  }
}

/**
 * Rows generated as they are read, resource by resource in ARN order (the order the sync writes fastest),
 * so that a month of metrics and cost lines for 100,000 resources is never held at once. The count is
 * known up front; every walk yields the same rows; JSON.stringify gives the rows as an array.
 */
class GeneratedRows<T> implements RowSource<T> {
  constructor(
    readonly length: number,
    private readonly generate: () => Generator<T>,
  ) {}
  [Symbol.iterator](): Iterator<T> {
    return this.generate();
  }
  toJSON(): T[] {
    return [...this];
  }
}

/** The world's resources in ARN order (JavaScript string order, as the sync sorts). */
function inArnOrder(w: WorldBuilder): InventoryResource[] {
  return [...w.resources.values()].sort(byArn);
}

const byArn = (a: { arn: string }, b: { arn: string }) => (a.arn < b.arn ? -1 : a.arn > b.arn ? 1 : 0);

/** How many of the window's days a resource created at `created` existed on. */
function daysExisted(created: number | undefined, days: ReturnType<typeof windowDays>): number {
  let n = 0;
  for (const { endMs } of days) if (existedOn(created, endMs)) n++;
  return n;
}

/** What one resource's metric points need: no reference to the resource itself. */
interface Reporting {
  arn: string;
  created: number | undefined;
  series: Series[];
}

/** What one resource's cost lines need. */
interface Billable {
  arn: string;
  created: number | undefined;
  productCode: string;
  usageType: string;
  daily: number;
}

/**
 * The metric points and cost lines of resources added one at a time, in any order (a whale's world is
 * built in parts): only what the rows need is kept per resource, and the rows are generated, in ARN
 * order, when they are read.
 */
export class DemoSignals {
  private readonly reporting: Reporting[] = [];
  private readonly billable: Billable[] = [];
  private readonly days: ReturnType<typeof windowDays>;
  private readonly seed: number;

  constructor(
    spec: DemoSpec,
    private readonly book: PriceBook,
  ) {
    this.seed = spec.seed;
    this.days = windowDays(new WorldBuilder({ ...spec, commands: [] }));
  }

  add(r: InventoryResource, s: Seeded): void {
    const series = seriesOf(r, s);
    const created = createdMs(r);
    if (series.length) this.reporting.push({ arn: r.arn, created, series });
    const product = PRODUCT[r.type];
    const monthly = product ? monthlyCost(r, this.book) : null;
    if (!product || !monthly) return;
    const daily = Math.round(((monthly * 24) / HOURS_PER_MONTH) * 1e6) / 1e6;
    this.billable.push({ arn: r.arn, created, productCode: product[0], usageType: product[1](r), daily });
  }

  metrics(): RowSource<MetricPoint> {
    const { days } = this;
    const noise = noiseFactory(this.seed);
    const reporting = this.reporting.sort(byArn);
    const count = reporting.reduce((n, x) => n + x.series.length * daysExisted(x.created, days), 0);
    return new GeneratedRows(count, function* () {
      for (const { arn, created, series } of reporting) {
        for (const { metric, value } of series) {
          const n = noise(arn, metric);
          for (const { day, date, endMs } of days) {
            if (!existedOn(created, endMs)) continue;
            const v = value(day, n(day));
            yield {
              arn,
              metric,
              day: date,
              avg: v.avg === null ? null : round(v.avg),
              max: v.max === null ? null : round(v.max),
              sum: v.sum === null ? null : round(v.sum),
            };
          }
        }
      }
    });
  }

  costs(): RowSource<CostLine> {
    const { days } = this;
    const billable = this.billable.sort(byArn);
    const count = billable.reduce((n, x) => n + daysExisted(x.created, days), 0);
    return new GeneratedRows(count, function* () {
      for (const { arn, created, productCode, usageType, daily } of billable) {
        for (const { date, endMs } of days) {
          if (!existedOn(created, endMs)) continue;
          yield { arn, day: date, productCode, usageType, unblendedCost: daily };
        }
      }
    });
  }
}

/**
 * Thirty days of daily CloudWatch-style metrics, ending the day before the environment's clock: CPU for
 * running instances and databases, connections for databases, bytes for NAT gateways, requests and 5xx
 * for load balancers. The seeded shapes: an idle worker (max CPU under 5 %), a database with no
 * connections, an idle NAT gateway, and on day -1 the incident's CPU, connection and 5xx spike.
 */
export function demoMetrics(w: WorldBuilder, s: Seeded): RowSource<MetricPoint> {
  return signalsOf(w, s, null).metrics();
}

const PRODUCT: Partial<
  Record<InventoryResource['type'], [product: string, usage: (r: InventoryResource) => string]>
> = {
  aws_ec2_instance: ['AmazonEC2', (r) => `BoxUsage:${String(r.attributes.instance_type)}`],
  aws_ebs_volume: ['AmazonEC2', (r) => `EBS:VolumeUsage.${String(r.attributes.volume_type)}`],
  aws_ebs_snapshot: ['AmazonEC2', () => 'EBS:SnapshotUsage'],
  aws_vpc_eip: [
    'AmazonVPC',
    (r) => (r.attributes.association_id ? 'PublicIPv4:InUseAddress' : 'PublicIPv4:IdleAddress'),
  ],
  aws_vpc_nat_gateway: ['AmazonEC2', () => 'NatGateway-Hours'],
  aws_ec2_application_load_balancer: ['AWSELB', () => 'LoadBalancerUsage'],
  aws_rds_db_instance: ['AmazonRDS', (r) => `InstanceUsage:${String(r.attributes.class)}`],
  aws_cloudwatch_alarm: ['AmazonCloudWatch', () => 'CW:AlarmMonitorUsage'],
  aws_s3_bucket: ['AmazonS3', () => 'TimedStorage-ByteHrs'],
};

/**
 * CUR-like daily cost lines for the same window: each billable resource's list-price cost of a day
 * (monthly cost × 24 / 730), per product and usage type, on the days it existed.
 */
export function demoCosts(w: WorldBuilder, book: PriceBook): RowSource<CostLine> {
  return signalsOf(w, null, book).costs();
}

/** The signals of a whole world (only the metrics need the seeded roles, only the costs the prices). */
function signalsOf(w: WorldBuilder, s: Seeded | null, book: PriceBook | null): DemoSignals {
  const signals = new DemoSignals(w.spec, book ?? new PriceBook(new Map()));
  const none = { reportingWorker: {}, reportingDb: {}, paymentsDb: {}, natIdle: {}, checkoutAlb: {} };
  for (const r of inArnOrder(w)) signals.add(r, s ?? (none as unknown as Seeded));
  return signals;
}
