import { money, round2, type Detector, type FindingDraft } from '../detector';
import { groupBy, label, num, plural, priceSql, priorityFor, severityFor, text, unitPrice } from './common';

/**
 * F3 — gp2 volumes that can move to gp3: `volume_type = 'gp2'`. gp3 costs less per GB (list $0.08
 * against $0.10) and includes 3000 IOPS; gp2's baseline is 3 IOPS/GiB (capped at 16000), so a gp2
 * volume above 1000 GiB needs IOPS bought on gp3 to keep its performance. Savings per volume =
 * size × (gp2 − gp3 $/GB-month) − max(0, min(3 × size, 16000) − 3000) × gp3 $/IOPS-month.
 * (thrifty `gp2_volumes`; CloudQuery `aws_cost__gp2_ebs_volumes.sql`; AWS Prescriptive Guidance
 * "Migrate EBS gp2 to gp3")
 *
 * Clustered by launch template: the volume of an instance launched from a template
 * (attachments[0].instance_id → the instance's launch_template) is one finding per template, since
 * fixing the template is what stops new gp2 volumes; other volumes are one finding each. The template's
 * volume types come from its default version (`default_version`, from the demo and from AWS's
 * DescribeLaunchTemplateVersions) or, from Terraform state, from the template's own configuration.
 */
export const ebsGp2ToGp3: Detector = {
  id: 'finops.ebs_gp2_to_gp3',
  domain: 'finops',
  title: 'gp2 volumes that can move to gp3',
  sql: `
    select v.arn, v.native_id, v.name, v.region, v.account_id,
           (v.attributes->>'size')::int as size_gb,
           (v.attributes->>'iops')::int as iops,
           v.attributes->'attachments'->0->>'instance_id' as instance_id,
           i.name as instance_name,
           coalesce(lt.id, t.native_id) as launch_template_id,
           coalesce(lt.name, t.attributes->>'launch_template_name') as launch_template_name,
           t.arn as launch_template_arn,
           (select string_agg(distinct m->'ebs'->>'volume_type', ', ')
              from jsonb_array_elements(coalesce(t.attributes->'default_version'->'block_device_mappings',
                                                 t.attributes->'block_device_mappings', '[]'::jsonb)) m)
             as template_volume_types,
           pr.gp2, pr.gp3, pr.gp3_iops,
           least(3 * (v.attributes->>'size')::int, 16000) as gp2_baseline_iops,
           greatest(0, least(3 * (v.attributes->>'size')::int, 16000) - 3000) as extra_iops,
           round((v.attributes->>'size')::numeric * (pr.gp2 - pr.gp3)
                 - greatest(0, least(3 * (v.attributes->>'size')::int, 16000) - 3000) * pr.gp3_iops, 2) as savings,
           coalesce(t.arn,
                    'launch-template:' || v.account_id || ':' || v.region || ':' || coalesce(lt.id, lt.name),
                    v.arn) as root_key
    from resources v
    cross join lateral (
      select ${priceSql(`'ebs:gp2:gb_month'`, 'v.region')} as gp2,
             ${priceSql(`'ebs:gp3:gb_month'`, 'v.region')} as gp3,
             ${priceSql(`'ebs:gp3:iops_month'`, 'v.region')} as gp3_iops
    ) pr
    left join resources i
      on i.type = 'aws_ec2_instance' and i.deleted_at is null
     and i.native_id = v.attributes->'attachments'->0->>'instance_id'
     and i.account_id = v.account_id and i.region = v.region
    left join lateral (
      select i.attributes->'launch_template'->>'launch_template_id' as id,
             i.attributes->'launch_template'->>'launch_template_name' as name
    ) lt on true
    left join resources t
      on t.type = 'aws_ec2_launch_template' and t.deleted_at is null
     and t.account_id = v.account_id and t.region = v.region
     and (t.native_id = lt.id or (lt.id is null and t.attributes->>'launch_template_name' = lt.name))
    where v.type = 'aws_ebs_volume' and v.deleted_at is null
      and v.attributes->>'volume_type' = 'gp2'
    order by root_key, v.arn`,
  findings(rows) {
    const drafts: FindingDraft[] = [];
    for (const [rootKey, group] of groupBy(rows, (r) => String(r.root_key))) {
      const first = group[0]!;
      const prices = `gp2 ${unitPrice(first.gp2)}/GB-month, gp3 ${unitPrice(first.gp3)}/GB-month, gp3 IOPS ${unitPrice(first.gp3_iops)}/IOPS-month`;
      const perVolume = group.map((r) => {
        const size = num(r.size_gb);
        const extra = num(r.extra_iops);
        const saving = round2(num(r.savings));
        const storage = round2(size * (num(r.gp2) - num(r.gp3)));
        const iopsCost = round2(extra * num(r.gp3_iops));
        return {
          row: r,
          saving,
          math: extra
            ? `${r.native_id}: ${size} GiB × (${unitPrice(r.gp2)} − ${unitPrice(r.gp3)}) = ${money(storage)}, minus ${extra} IOPS above gp3's free 3000 (gp2 baseline ${num(r.gp2_baseline_iops)} = min(3 × ${size}, 16000)) × ${unitPrice(r.gp3_iops)} = ${money(iopsCost)} → ${money(saving)}`
            : `${r.native_id}: ${size} GiB × (${unitPrice(r.gp2)} − ${unitPrice(r.gp3)}) = ${money(saving)} (gp2 baseline ${num(r.gp2_baseline_iops)} IOPS ≤ gp3's free 3000)`,
        };
      });
      const total = round2(perVolume.reduce((s, v) => s + v.saving, 0));
      const resources = perVolume.map((v) => ({ arn: v.row.arn, actionType: 'migrate', savings: v.saving }));
      const templateName = text(first.launch_template_name) ?? text(first.launch_template_id);
      if (rootKey !== first.arn && templateName) {
        const tmplTypes = text(first.template_volume_types);
        const gib = group.reduce((s, r) => s + num(r.size_gb), 0);
        drafts.push({
          rootKey,
          title: `Launch template ${templateName} keeps creating gp2 volumes: ${plural(group.length, 'volume')} to move to gp3`,
          severity: severityFor(total),
          narrative: `${plural(group.length, 'gp2 volume')} (${gib} GiB in all) belong to instances launched from template ${templateName}${first.launch_template_id ? ` (${String(first.launch_template_id)})` : ''} in ${String(first.region)}${tmplTypes ? `, whose block device mapping asks for ${tmplTypes}` : ''}. Moving them to gp3 keeps their baseline performance and saves ${money(total)} a month; change the template to gp3 too, or every instance it launches brings a new gp2 volume.`,
          confidence: 0.95,
          resources,
          recommendation: {
            rationale: `gp3 is 20% cheaper per GB than gp2 and includes 3000 IOPS, more than these volumes' gp2 baseline. Modify the ${plural(group.length, 'volume')} in place (no downtime) and set the template's volume type to gp3: ${money(total)}/month.`,
            actionType: 'migrate',
            savings: total,
            effort: 'low',
            priority: priorityFor(total),
          },
          reasoning: `volume_type = 'gp2' on ${plural(group.length, 'volume')} whose instance (attachments[0].instance_id) was launched from template ${templateName}; clustered on the template. Prices (${String(first.region)}): ${prices}. Per volume: ${perVolume.map((v) => v.math).join('; ')}. Total ${money(total)}/month.`,
        });
        continue;
      }
      for (const v of perVolume) {
        const r = v.row;
        const extra = num(r.extra_iops);
        const attached = text(r.instance_id)
          ? `attached to ${text(r.instance_name) ? `${String(r.instance_name)} (${String(r.instance_id)})` : String(r.instance_id)}`
          : 'attached to no instance';
        drafts.push({
          rootKey: r.arn,
          title: `Switch ${text(r.name) ?? String(r.native_id)} (${r.size_gb} GiB) from gp2 to gp3: saves ${money(v.saving)}/month`,
          severity: severityFor(v.saving),
          narrative: `EBS volume ${label(r)} in ${String(r.region)} is ${r.size_gb} GiB of gp2, ${attached}. gp3 costs less per GB and includes 3000 IOPS${extra ? `; this volume's gp2 baseline is ${num(r.gp2_baseline_iops)} IOPS, so keeping its performance on gp3 means buying ${extra} IOPS, which the savings already subtract` : `, above this volume's gp2 baseline of ${num(r.gp2_baseline_iops)} IOPS`}. Modifying it to gp3 saves ${money(v.saving)} a month.`,
          confidence: 0.95,
          resources: [{ arn: r.arn, actionType: 'migrate', savings: v.saving }],
          recommendation: {
            rationale: `gp3 is 20% cheaper per GB than gp2 and decouples IOPS from size; an in-place volume modification with no downtime saves ${money(v.saving)}/month${extra ? ` after provisioning ${extra} extra IOPS to match gp2's baseline` : ''}.`,
            actionType: 'migrate',
            savings: v.saving,
            effort: 'low',
            priority: priorityFor(v.saving),
          },
          reasoning: `volume_type = 'gp2' for ${String(r.native_id)} (${attached}${text(r.instance_id) ? ', no launch template' : ''}). Prices (${String(r.region)}): ${prices}. ${v.math}.`,
        });
      }
    }
    return drafts;
  },
};
