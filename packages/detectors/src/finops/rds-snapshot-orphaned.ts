import { type Detector } from '../detector';
import { CLOCK_CTE, label, num } from './common';

/** thrifty `rds_unused_snapshots`: snapshots of a missing source older than this are flagged. */
export const RDS_SNAPSHOT_MAX_DAYS = 30;

/**
 * F13 — RDS snapshots without their source database: `status = 'available'`, the source
 * `db_instance_identifier` is no live RDS instance (same account and region), and the snapshot is more
 * than 30 days old. The reference prices it at snapshot GB × the RDS backup-storage price; our price
 * table has no sourced RDS backup-storage price, so the savings are left at $0 and the size is stated
 * instead. (thrifty `rds_unused_snapshots`)
 */
export const rdsSnapshotOrphaned: Detector = {
  id: 'finops.rds_snapshot_orphaned',
  domain: 'finops',
  title: 'RDS snapshots without a source database',
  sql: `
    with ${CLOCK_CTE}
    select s.arn, s.native_id, s.name, s.region,
           s.attributes->>'db_instance_identifier' as source_db,
           s.attributes->>'snapshot_type' as snapshot_type,
           (s.attributes->>'allocated_storage')::int as allocated_gb,
           s.attributes->>'snapshot_create_time' as created,
           floor(extract(epoch from (clock.now - (s.attributes->>'snapshot_create_time')::timestamptz)) / 86400)::int
             as age_days
    from resources s
    cross join clock
    where s.type = 'aws_rds_db_snapshot' and s.deleted_at is null
      and s.attributes->>'status' = 'available'
      and (s.attributes->>'snapshot_create_time')::timestamptz < clock.now - interval '${RDS_SNAPSHOT_MAX_DAYS} days'
      and not exists (
        select 1 from resources d
        where d.type = 'aws_rds_db_instance' and d.deleted_at is null
          and d.native_id = s.attributes->>'db_instance_identifier'
          and d.account_id = s.account_id and d.region = s.region
      )
    order by s.arn`,
  findings(rows) {
    return rows.map((row) => {
      const age = num(row.age_days);
      const gb = num(row.allocated_gb);
      return {
        rootKey: row.arn,
        title: `RDS snapshot ${label(row)} outlived its database ${String(row.source_db)}`,
        severity: 'low',
        narrative: `RDS snapshot ${label(row)} in ${String(row.region)} (${gb} GiB, ${String(row.snapshot_type ?? 'unknown type')}) was taken ${age} days ago from ${String(row.source_db)}, which no longer exists. It is billed as backup storage every month; we have no sourced list price for RDS backup storage, so no savings figure is given. Keep it only if it is a deliberate final backup with a retention reason; otherwise delete it.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'delete', savings: 0 }],
        recommendation: {
          rationale: `Snapshots of deleted databases accumulate unnoticed. Confirm no retention rule requires it, then delete it; the saving is ${gb} GiB of RDS backup storage a month (not priced here).`,
          actionType: 'delete',
          savings: 0,
          effort: 'low',
          priority: 4,
        },
        estimatedSavings: 0,
        reasoning: `status = 'available'; db_instance_identifier ${String(row.source_db)} is not a live RDS instance in the same account and region; created ${String(row.created)}, ${age} days before the inventory's clock (> ${RDS_SNAPSHOT_MAX_DAYS}). Savings: ${gb} GiB × RDS backup-storage price, which the price table does not have: $0.00 claimed.`,
      };
    });
  },
};
