import { money, round2, type Detector } from '../detector';
import { CLOCK_CTE, label, num, priceSql, priorityFor, severityFor, unitPrice } from './common';

/**
 * F5 — EBS snapshots older than 90 days: `start_time < now − 90 days` (thrifty's
 * `ebs_snapshot_age_max_days` = 90), one finding per snapshot; orphaned when its `volume_id` is not a
 * live volume any more. Savings of deleting = volume_size × $/GB-month of snapshot storage, which is an
 * upper bound: snapshots are incremental, and AWS bills only the blocks this one holds alone.
 * (thrifty `ebs_snapshot_max_age`)
 */
export const ebsSnapshotOld: Detector = {
  id: 'finops.ebs_snapshot_old',
  domain: 'finops',
  title: 'EBS snapshots older than 90 days',
  sql: `
    with ${CLOCK_CTE}
    select s.arn, s.native_id, s.name, s.region,
           s.attributes->>'volume_id' as volume_id,
           (s.attributes->>'volume_size')::int as volume_size_gb,
           s.attributes->>'start_time' as start_time,
           floor(extract(epoch from (clock.now - (s.attributes->>'start_time')::timestamptz)) / 86400)::int as age_days,
           not exists (
             select 1 from resources v
             where v.type = 'aws_ebs_volume' and v.deleted_at is null
               and v.native_id = s.attributes->>'volume_id'
           ) as orphaned,
           ${priceSql(`'ebs:snapshot:gb_month'`, 's.region')} as snapshot_gb_month,
           round((s.attributes->>'volume_size')::numeric * ${priceSql(`'ebs:snapshot:gb_month'`, 's.region')}, 2)
             as savings
    from resources s
    cross join clock
    where s.type = 'aws_ebs_snapshot' and s.deleted_at is null
      and (s.attributes->>'start_time')::timestamptz < clock.now - interval '90 days'
    order by s.arn`,
  findings(rows) {
    return rows.map((row) => {
      const savings = round2(num(row.savings));
      const orphaned = row.orphaned === true;
      const age = num(row.age_days);
      const size = num(row.volume_size_gb);
      const snap = label(row);
      return {
        rootKey: row.arn,
        title: orphaned
          ? `Orphaned EBS snapshot ${snap}, ${age} days old: its volume ${String(row.volume_id)} is gone`
          : `EBS snapshot ${snap} is ${age} days old`,
        severity: severityFor(savings),
        narrative: `EBS snapshot ${snap} in ${String(row.region)} was taken ${age} days ago (${String(row.start_time)}) from volume ${String(row.volume_id)}${orphaned ? ', which no longer exists: the snapshot is all that is left of it, and nobody may remember what it holds' : ', which still exists'}. It is older than the 90-day retention most backup policies keep. Deleting it saves up to ${money(savings)} a month: ${size} GiB at the snapshot list price is an upper bound, since snapshots are incremental and only the blocks no other snapshot holds are freed.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'delete', savings }],
        recommendation: {
          rationale: `Snapshots past 90 days are rarely restored${orphaned ? ', and this one outlived its volume' : ''}. Check it is not the only copy of data you must keep (or move it to the archive tier), then delete it: up to ${money(savings)}/month (an upper bound).`,
          actionType: 'delete',
          savings,
          effort: 'low',
          priority: priorityFor(savings),
        },
        reasoning: `start_time ${String(row.start_time)} is ${age} days before the inventory's clock (> 90). volume_id ${String(row.volume_id)} ${orphaned ? 'is not among the live volumes: orphaned' : 'is a live volume'}. Savings upper bound: volume_size ${size} GiB × ${unitPrice(row.snapshot_gb_month)}/GB-month = ${money(savings)} (snapshots are incremental: the real figure can be lower).`,
      };
    });
  },
};
