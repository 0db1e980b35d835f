import { money, round2, type Detector } from '../detector';

/**
 * F1 — unattached EBS volumes: no attachments (equivalently state 'available'). Deleting saves the
 * volume's whole monthly cost: size × $/GB-month of its type, plus io1/io2 IOPS and gp3 extras.
 * (thrifty `unattached_ebs_volumes`; CloudQuery `unused_ec2_ebs_volumes.sql`)
 */
export const ebsUnattached: Detector = {
  id: 'finops.ebs_unattached',
  domain: 'finops',
  title: 'Unattached EBS volumes',
  sql: `
    select r.arn, r.native_id, r.name, r.region,
           r.attributes->>'volume_type' as volume_type,
           (r.attributes->>'size')::int as size_gb,
           (r.attributes->>'iops')::int as iops,
           r.attributes->>'create_time' as create_time,
           r.monthly_cost::float8 as monthly_cost
    from resources r
    where r.type = 'aws_ebs_volume' and r.deleted_at is null
      and coalesce(jsonb_array_length(r.attributes->'attachments'), 0) = 0
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const cost = round2(Number(row.monthly_cost ?? 0));
      const label = `${String(row.native_id)}${row.name ? ` (${String(row.name)})` : ''}`;
      return {
        rootKey: row.arn,
        title: `Unattached ${String(row.volume_type)} volume ${label}: ${row.size_gb} GiB`,
        severity: cost >= 100 ? 'high' : cost >= 10 ? 'medium' : 'low',
        narrative: `EBS volume ${label} in ${String(row.region)} is attached to no instance (state available) but is billed every month: ${row.size_gb} GiB of ${String(row.volume_type)}${row.iops ? ` with ${row.iops} IOPS` : ''} costs ${money(cost)} a month at list price. Snapshot it if the data may be needed, then delete it.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'delete', savings: cost }],
        recommendation: {
          rationale: `Nothing reads or writes an unattached volume; a snapshot keeps the data for about half the price per GB, and deleting removes ${money(cost)}/month.`,
          actionType: 'delete',
          savings: cost,
          effort: 'low',
          priority: cost >= 100 ? 1 : cost >= 10 ? 2 : 3,
        },
        reasoning: `attachments = [] for ${String(row.native_id)}; monthly cost from the price table = ${money(cost)} (size ${row.size_gb} GiB × ${String(row.volume_type)} price${row.iops && row.volume_type !== 'gp2' ? ` + ${row.iops} IOPS` : ''}); savings of deleting = the whole cost.`,
      };
    });
  },
};
