import type { Db } from '@opsi/db';
import type { InventoryResource } from './model';

export const HOURS_PER_MONTH = 730;

/** List prices by region and SKU, loaded from the `prices` table. */
export class PriceBook {
  constructor(private readonly prices: Map<string, number>) {}

  static async load(db: Db): Promise<PriceBook> {
    const rows = await db.selectFrom('prices').select(['region', 'sku', 'usd']).execute();
    return new PriceBook(new Map(rows.map((r) => [`${r.region}|${r.sku}`, Number(r.usd)])));
  }

  /** The price of a SKU in a region, or undefined when we have no sourced price for it. */
  get(region: string, sku: string): number | undefined {
    return this.prices.get(`${region}|${sku}`);
  }
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v ?? 0)) || 0;
const round = (v: number) => Math.round(v * 100) / 100;

/** The monthly cost of an EBS volume of a type and size at list price (730 h/month). */
export function volumeMonthlyCost(
  book: PriceBook,
  region: string,
  a: { volume_type: string; size: number; iops?: number | null; throughput?: number | null },
): number | null {
  const gb = book.get(region, `ebs:${a.volume_type}:gb_month`);
  if (gb === undefined) return null;
  let cost = a.size * gb;
  if (a.volume_type === 'gp3') {
    cost += Math.max(0, num(a.iops) - 3000) * (book.get(region, 'ebs:gp3:iops_month') ?? 0);
    cost += Math.max(0, num(a.throughput) - 125) * (book.get(region, 'ebs:gp3:mibps_month') ?? 0);
  } else if (a.volume_type === 'io1' || a.volume_type === 'io2') {
    cost += num(a.iops) * (book.get(region, `ebs:${a.volume_type}:iops_month`) ?? 0);
  }
  return round(cost);
}

/** The hourly list price of an EC2 instance type, when we have one. */
export function instanceHourly(book: PriceBook, region: string, instanceType: string): number | undefined {
  return book.get(region, `ec2:${instanceType}:hour`);
}

/** The hourly list price of an RDS instance class, engine and deployment, when we have one. */
export function rdsHourly(
  book: PriceBook,
  region: string,
  engine: string,
  dbClass: string,
  multiAz: boolean,
): number | undefined {
  return book.get(region, `rds:${engine}:${dbClass}:${multiAz ? 'multi' : 'single'}:hour`);
}

/**
 * A resource's monthly cost at list price and 730 hours a month, or null where no sourced price exists
 * (we would rather show nothing than a made-up number).
 */
export function monthlyCost(r: InventoryResource, book: PriceBook): number | null {
  const a = r.attributes;
  const region = r.region;
  const hourly = (sku: string) => {
    const p = book.get(region, sku);
    return p === undefined ? null : round(p * HOURS_PER_MONTH);
  };
  switch (r.type) {
    case 'aws_ebs_volume':
      return volumeMonthlyCost(book, region, {
        volume_type: String(a.volume_type),
        size: num(a.size),
        iops: a.iops as number | null,
        throughput: a.throughput as number | null,
      });
    case 'aws_ebs_snapshot': {
      // An upper bound: snapshots are incremental, and AWS bills the changed blocks.
      const p = book.get(region, 'ebs:snapshot:gb_month');
      return p === undefined ? null : round(num(a.volume_size) * p);
    }
    case 'aws_ec2_instance': {
      if (a.instance_state !== 'running') return 0; // compute is free while stopped; its EBS is billed apart
      const p = instanceHourly(book, region, String(a.instance_type));
      if (p === undefined) return null;
      const ip = a.public_ip_address ? (book.get(region, 'ec2:public_ipv4:hour') ?? 0) : 0;
      return round((p + ip) * HOURS_PER_MONTH);
    }
    case 'aws_vpc_eip':
      // Every public IPv4 address is billed since 2024-02-01, associated or not. An EIP on a running
      // instance is the instance's public address: counted here, not on the instance.
      return hourly('ec2:public_ipv4:hour');
    case 'aws_vpc_nat_gateway':
      return a.state === 'available' ? hourly('vpc:nat_gateway:hour') : 0;
    case 'aws_ec2_application_load_balancer':
      return hourly(`elb:${String(a.type ?? 'application')}:hour`);
    case 'aws_rds_db_instance': {
      if (a.status === 'stopped') return 0;
      const multi = a.multi_az === true;
      const p = rdsHourly(book, region, String(a.engine), String(a.class), multi);
      const storage = book.get(
        region,
        `rds:storage:${String(a.storage_type)}:${multi ? 'multi' : 'single'}:gb_month`,
      );
      if (p === undefined || storage === undefined) return null;
      return round(p * HOURS_PER_MONTH + num(a.allocated_storage) * storage);
    }
    case 'aws_cloudwatch_alarm':
      return book.get(region, 'cloudwatch:alarm:month') ?? null;
    case 'aws_s3_bucket': {
      const p = book.get(region, 's3:standard:gb_month');
      return p === undefined ? null : round((num(a.size_bytes) / 1024 ** 3) * p);
    }
    default:
      return null;
  }
}
