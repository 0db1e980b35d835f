import { money, round2, type Detector } from '../detector';
import { label, num, priceSql, priorityFor, severityFor, text, unitPrice } from './common';

/**
 * F4 — io1/io2 volumes with at most 16000 provisioned IOPS, which gp3 can serve:
 * `volume_type in ('io1', 'io2') and iops <= 16000`. Savings =
 * size × $io/GB + iops × $io/IOPS − (size × $gp3/GB + max(0, iops − 3000) × $gp3/IOPS), at the list
 * prices of the volume's region. (thrifty `low_iops_ebs_volumes`)
 */
export const ebsIoToGp3: Detector = {
  id: 'finops.ebs_io_to_gp3',
  domain: 'finops',
  title: 'io1/io2 volumes with ≤ 16000 IOPS that gp3 can serve',
  sql: `
    select v.arn, v.native_id, v.name, v.region,
           v.attributes->>'volume_type' as volume_type,
           (v.attributes->>'size')::int as size_gb,
           (v.attributes->>'iops')::int as iops,
           jsonb_array_length(coalesce(v.attributes->'attachments', '[]'::jsonb)) as attachments,
           v.attributes->'attachments'->0->>'instance_id' as instance_id,
           pr.io_gb, pr.io_iops, pr.gp3_gb, pr.gp3_iops,
           round((v.attributes->>'size')::numeric * pr.io_gb + (v.attributes->>'iops')::numeric * pr.io_iops, 2)
             as current_cost,
           round((v.attributes->>'size')::numeric * pr.gp3_gb
                 + greatest(0, (v.attributes->>'iops')::int - 3000) * pr.gp3_iops, 2) as gp3_cost,
           round((v.attributes->>'size')::numeric * pr.io_gb + (v.attributes->>'iops')::numeric * pr.io_iops
                 - ((v.attributes->>'size')::numeric * pr.gp3_gb
                    + greatest(0, (v.attributes->>'iops')::int - 3000) * pr.gp3_iops), 2) as savings
    from resources v
    cross join lateral (
      select ${priceSql(`'ebs:' || (v.attributes->>'volume_type') || ':gb_month'`, 'v.region')} as io_gb,
             ${priceSql(`'ebs:' || (v.attributes->>'volume_type') || ':iops_month'`, 'v.region')} as io_iops,
             ${priceSql(`'ebs:gp3:gb_month'`, 'v.region')} as gp3_gb,
             ${priceSql(`'ebs:gp3:iops_month'`, 'v.region')} as gp3_iops
    ) pr
    where v.type = 'aws_ebs_volume' and v.deleted_at is null
      and v.attributes->>'volume_type' in ('io1', 'io2')
      and (v.attributes->>'iops')::int <= 16000
    order by v.arn`,
  findings(rows) {
    return rows.map((row) => {
      const savings = round2(num(row.savings));
      const current = round2(num(row.current_cost));
      const gp3 = round2(num(row.gp3_cost));
      const size = num(row.size_gb);
      const iops = num(row.iops);
      const vt = String(row.volume_type);
      const where = text(row.instance_id)
        ? `attached to ${String(row.instance_id)}`
        : 'attached to no instance';
      return {
        rootKey: row.arn,
        title: `Switch ${text(row.name) ?? String(row.native_id)} from ${vt} at ${iops} IOPS to gp3: saves ${money(savings)}/month`,
        severity: severityFor(savings),
        narrative: `EBS volume ${label(row)} in ${String(row.region)} is ${size} GiB of ${vt} provisioned at ${iops} IOPS, ${where}. gp3 delivers up to 16000 IOPS, so the same ${iops} IOPS cost ${money(gp3)} a month on gp3 against ${money(current)} on ${vt}: ${money(savings)} a month less.${text(row.instance_id) ? '' : ' (Unattached, deleting it saves its whole cost: see the unattached-volume finding.)'}`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'migrate', savings }],
        recommendation: {
          rationale: `io1/io2 bills every provisioned IOPS (${unitPrice(row.io_iops)}/IOPS-month); gp3 includes 3000 and sells the rest at ${unitPrice(row.gp3_iops)}. At ${iops} IOPS (≤ 16000, gp3's maximum) an in-place modification to gp3 keeps the performance and saves ${money(savings)}/month.`,
          actionType: 'migrate',
          savings,
          effort: 'low',
          priority: priorityFor(savings),
        },
        reasoning: `volume_type = '${vt}' and iops = ${iops} ≤ 16000. Now: ${size} GiB × ${unitPrice(row.io_gb)} + ${iops} IOPS × ${unitPrice(row.io_iops)} = ${money(current)}. On gp3: ${size} GiB × ${unitPrice(row.gp3_gb)} + max(0, ${iops} − 3000) = ${Math.max(0, iops - 3000)} IOPS × ${unitPrice(row.gp3_iops)} = ${money(gp3)}. Savings ${money(current)} − ${money(gp3)} = ${money(savings)}/month.`,
      };
    });
  },
};
