import { createHash } from 'node:crypto';
import type { CostLine, InventoryResource, MetricPoint } from '../model';
import { HOURS_PER_MONTH, monthlyCost, type PriceBook } from '../pricing';
import type { Seeded } from './seeded';
import type { WorldBuilder } from './world';

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

/**
 * Thirty days of daily CloudWatch-style metrics, ending the day before the environment's clock: CPU for
 * running instances and databases, connections for databases, bytes for NAT gateways, requests and 5xx
 * for load balancers. The seeded shapes: an idle worker (max CPU under 5 %), a database with no
 * connections, an idle NAT gateway, and on day -1 the incident's CPU, connection and 5xx spike.
 */
export function demoMetrics(w: WorldBuilder, s: Seeded): MetricPoint[] {
  const points: MetricPoint[] = [];
  const noise = noiseFactory(w.spec.seed);
  const days = windowDays(w);
  const push = (
    r: InventoryResource,
    metric: string,
    fn: (day: number, n: number) => { avg: number | null; max: number | null; sum: number | null },
  ) => {
    const n = noise(r.arn, metric);
    const created = createdMs(r);
    for (const { day, date, endMs } of days) {
      if (!existedOn(created, endMs)) continue;
      const v = fn(day, n(day));
      points.push({
        arn: r.arn,
        metric,
        day: date,
        avg: v.avg === null ? null : round(v.avg),
        max: v.max === null ? null : round(v.max),
        sum: v.sum === null ? null : round(v.sum),
      });
    }
  };
  for (const r of w.resources.values()) {
    switch (r.type) {
      case 'aws_ec2_instance': {
        if (r.attributes.instance_state !== 'running') break; // a stopped instance reports nothing
        if (r.arn === s.reportingWorker.arn) {
          push(r, 'CPUUtilization', (_d, x) => ({ avg: 1 + x * 1.5, max: 2.5 + x * 2, sum: null }));
        } else {
          push(r, 'CPUUtilization', (_d, x) => ({ avg: 22 + x * 30, max: 45 + x * 40, sum: null }));
        }
        break;
      }
      case 'aws_rds_db_instance': {
        const idle = r.arn === s.reportingDb.arn;
        const spiking = r.arn === s.paymentsDb.arn;
        push(r, 'CPUUtilization', (day, x) =>
          idle
            ? { avg: 2 + x, max: 3 + x * 1.5, sum: null }
            : spiking && day === -1
              ? { avg: 78 + x * 6, max: 97 + x * 2, sum: null }
              : { avg: 18 + x * 20, max: 40 + x * 25, sum: null },
        );
        push(r, 'DatabaseConnections', (day, x) =>
          idle
            ? { avg: 0, max: 0, sum: null }
            : spiking && day === -1
              ? { avg: 310 + x * 40, max: 480 + x * 20, sum: null }
              : { avg: 40 + x * 60, max: 110 + x * 60, sum: null },
        );
        break;
      }
      case 'aws_vpc_nat_gateway': {
        const idle = r.arn === s.natIdle.arn;
        push(r, 'BytesOutToDestination', (_d, x) => ({
          avg: null,
          max: null,
          sum: idle ? 0 : Math.round((20 + x * 40) * 1024 ** 3),
        }));
        break;
      }
      case 'aws_ec2_application_load_balancer': {
        const empty = (r.attributes.target_group_arns as string[]).length === 0;
        push(r, 'RequestCount', (_d, x) => ({
          avg: null,
          max: null,
          sum: empty ? 0 : Math.round(400_000 + x * 900_000),
        }));
        const spiking = r.arn === s.checkoutAlb.arn;
        push(r, 'HTTPCode_ELB_5XX_Count', (day, x) => ({
          avg: null,
          max: null,
          sum: empty ? 0 : spiking && day === -1 ? 1800 + Math.round(x * 400) : Math.round(x * 6),
        }));
        break;
      }
    }
  }
  return points;
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
export function demoCosts(w: WorldBuilder, book: PriceBook): CostLine[] {
  const lines: CostLine[] = [];
  const days = windowDays(w);
  for (const r of w.resources.values()) {
    const product = PRODUCT[r.type];
    if (!product) continue;
    const monthly = monthlyCost(r, book);
    if (!monthly) continue;
    const daily = Math.round(((monthly * 24) / HOURS_PER_MONTH) * 1e6) / 1e6;
    const usageType = product[1](r);
    const created = createdMs(r);
    for (const { date, endMs } of days) {
      if (!existedOn(created, endMs)) continue;
      lines.push({
        arn: r.arn,
        day: date,
        productCode: product[0],
        usageType,
        unblendedCost: daily,
      });
    }
  }
  return lines;
}
