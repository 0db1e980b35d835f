import type { Detector } from '../detector';
import { coversPort, describeRule, internetIngress, label, list, str, where, type SgRule } from './shared';

interface OpenGroup {
  arn: string;
  group_id: string;
  name: string | null;
  rules: SgRule[];
}

/**
 * S7 — publicly accessible RDS instances: `publicly_accessible = true` (the endpoint resolves to a
 * public address). Critical when one of its security groups also admits the endpoint's port from
 * 0.0.0.0/0 or ::/0 (containment, protocol -1 or tcp): then the database is reachable from anywhere
 * now; high otherwise. (steampipe-mod-aws-compliance `rds_db_instance_prohibit_public_access`; Prowler
 * `rds_instance_no_public_access`; Checkov `CKV_AWS_17`)
 */
export const rdsPublic: Detector = {
  id: 'security.rds_public',
  domain: 'security',
  title: 'Publicly accessible RDS instances',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'engine' as engine,
           r.attributes->'endpoint'->>'address' as endpoint,
           (r.attributes->'endpoint'->>'port')::int as port,
           (select jsonb_agg(jsonb_build_object('arn', sg.arn, 'group_id', sg.native_id, 'name', sg.name,
                     'rules', (select jsonb_agg(rule)
                                 from jsonb_array_elements(coalesce(sg.attributes->'rules', '[]'::jsonb)) as rule
                                 where ${internetIngress()}
                                   and ${coversPort(`(r.attributes->'endpoint'->>'port')::int`, ['tcp'])}))
                     order by sg.arn)
              from jsonb_array_elements(coalesce(r.attributes->'vpc_security_groups', '[]'::jsonb)) as vg
              join resources sg on sg.type = 'aws_vpc_security_group' and sg.deleted_at is null
                               and sg.native_id = vg->>'vpc_security_group_id'
                               and sg.account_id = r.account_id and sg.region = r.region) as security_groups
    from resources r
    where r.type = 'aws_rds_db_instance' and r.deleted_at is null
      and (r.attributes->>'publicly_accessible')::boolean = true
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const db = label(row);
      const open = list<OpenGroup>(row.security_groups).filter((g) => list(g.rules).length > 0);
      const openText = open
        .map((g) => `${g.name ?? g.group_id} (${list<SgRule>(g.rules).map(describeRule).join('; ')})`)
        .join(', ');
      const reachable = open.length > 0;
      return {
        rootKey: row.arn,
        title: `RDS instance ${db} is publicly accessible${reachable ? ` and open to the Internet on ${str(row.port)}` : ''}`,
        severity: reachable ? 'critical' : 'high',
        narrative: `RDS ${str(row.engine)} instance ${db} — ${where(row)} — has publicly_accessible = true: its endpoint ${str(row.endpoint)} resolves to a public IP address. ${reachable ? `Its security group ${openText} admits port ${str(row.port)} from the whole Internet, so the database answers anyone who tries its password.` : `None of its security groups admits port ${str(row.port)} from 0.0.0.0/0 or ::/0 today, so one rule change is all that separates it from the Internet.`}`,
        confidence: 0.95,
        resources: [
          { arn: row.arn, actionType: 'disable-public-access', savings: 0 },
          ...open.map((g) => ({ arn: g.arn, actionType: 'restrict-ingress', savings: 0 })),
        ],
        recommendation: {
          rationale: `Set publicly_accessible to false (modify-db-instance --no-publicly-accessible; the endpoint then resolves to its private address)${reachable ? ` and remove the Internet source from ${open.map((g) => g.name ?? g.group_id).join(', ')}` : ''}. Applications inside the VPC keep working; outside clients go through a VPN, bastion or RDS Proxy.`,
          actionType: 'disable-public-access',
          savings: 0,
          effort: 'low',
          priority: reachable ? 1 : 2,
        },
        reasoning: `publicly_accessible = true on ${str(row.native_id)}; ${reachable ? `security group rule(s) ${openText} contain port ${str(row.port)} from 0.0.0.0/0 or ::/0, hence critical` : `no security group rule admits port ${str(row.port)} from the Internet, hence high`}.`,
      };
    });
  },
};
