import type { DetectorRow, Effort, Measured, Severity } from '../detector';

/**
 * Shared pieces of the FinOps detectors: SQL fragments (the inventory's clock, list prices of the
 * resource's region) and the scales that turn monthly savings into severity and priority.
 */

/** 730 hours a month, as Infracost and the price table use (domain notes §2.5). */
export const HOURS_PER_MONTH = 730;

/** A month of hours of something billed by the hour (an instance, a load balancer). */
export const MONTH_OF_HOURS = (unit: string): Measured => ({ value: HOURS_PER_MONTH, unit });
/** An Elastic IP is billed as one public IPv4 address, by the hour. */
export const ONE_ADDRESS: Measured = { value: 1, unit: 'address' };

/**
 * "Now" for ages and metric windows: the inventory's latest observation, not the wall clock (the demo's
 * clock is simulated, and a re-run of the evidence later must give the same rows).
 */
export const CLOCK_CTE = `clock as (select max(observed_at) as now from inventory_snapshots)`;

/**
 * The last `days` whole UTC days of daily metrics before the inventory's clock, for `metrics_daily`
 * aliased `m` (needs the clock CTE in scope): with the clock at 2026-11-01T00:00Z and 30 days, the days
 * 2026-10-02 to 2026-10-31.
 */
export function metricWindowSql(days: number, m = 'm'): string {
  return `${m}.day >= ((clock.now at time zone 'UTC') - interval '${days} days')::date
        and ${m}.day < (clock.now at time zone 'UTC')::date`;
}

/** The list price of a SKU (an SQL expression) in a region (an SQL expression), or null. */
export function priceSql(sku: string, region: string): string {
  return `(select p.usd from prices p where p.region = ${region} and p.sku = ${sku})`;
}

/**
 * The monthly list cost of the EBS volume aliased `v`, from the price table of its region: size × $/GB-mo
 * of its type, plus provisioned IOPS for io1/io2, plus gp3 IOPS above 3000 and throughput above 125 MiB/s.
 * Null when the type has no sourced price.
 */
export function volumeCostSql(v: string): string {
  const a = `${v}.attributes`;
  const type = `(${a}->>'volume_type')`;
  return `round(
      (${a}->>'size')::numeric * ${priceSql(`'ebs:' || ${type} || ':gb_month'`, `${v}.region`)}
      + case
          when ${type} = 'gp3' then
            greatest(0, coalesce((${a}->>'iops')::numeric, 3000) - 3000)
              * coalesce(${priceSql(`'ebs:gp3:iops_month'`, `${v}.region`)}, 0)
            + greatest(0, coalesce((${a}->>'throughput')::numeric, 125) - 125)
              * coalesce(${priceSql(`'ebs:gp3:mibps_month'`, `${v}.region`)}, 0)
          when ${type} in ('io1', 'io2') then
            coalesce((${a}->>'iops')::numeric, 0)
              * coalesce(${priceSql(`'ebs:' || ${type} || ':iops_month'`, `${v}.region`)}, 0)
          else 0
        end, 2)`;
}

/** Severity from monthly savings: ≥ $100 high, ≥ $10 medium, else low; `zero` when nothing is saved. */
export function severityFor(savings: number, zero: Severity = 'info'): Severity {
  if (savings >= 100) return 'high';
  if (savings >= 10) return 'medium';
  if (savings > 0) return 'low';
  return zero;
}

/** Priority (1 first) from monthly savings and effort. */
export function priorityFor(savings: number, effort: Effort = 'low'): 1 | 2 | 3 | 4 | 5 {
  const base = savings >= 100 ? 1 : savings >= 10 ? 2 : savings > 0 ? 3 : 4;
  return Math.min(5, base + (effort === 'high' ? 1 : 0)) as 1 | 2 | 3 | 4 | 5;
}

/** A number from a row field (numeric columns come back as numbers, nulls as 0). */
export function num(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** A row field as text, or null. */
export function text(value: unknown): string | null {
  return value === null || value === undefined || value === '' ? null : String(value);
}

/** How a resource is named in prose: its id, and its Name when it has one. */
export function label(row: DetectorRow, id = 'native_id', name = 'name'): string {
  const n = text(row[name]);
  const i = String(row[id]);
  return n && n !== i ? `${i} (${n})` : i;
}

/** A USD unit price with as many decimals as it has (0.0225, 0.005). */
export function unitPrice(value: unknown): string {
  return `$${num(value)}`;
}

/** Rows grouped by a key, in first-seen order. */
export function groupBy(rows: DetectorRow[], key: (row: DetectorRow) => string): Map<string, DetectorRow[]> {
  const out = new Map<string, DetectorRow[]>();
  for (const row of rows) {
    const k = key(row);
    const list = out.get(k);
    if (list) list.push(row);
    else out.set(k, [row]);
  }
  return out;
}

/** "1 volume", "12 volumes". */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}
