import { type Detector } from '../detector';
import {
  dependentsOf,
  dependentsSentence,
  envNote,
  envOf,
  jsonArray,
  num,
  records,
  sentenceList,
  str,
  strings,
} from './common';

interface Rule {
  ip_protocol: string;
  from_port: number | null;
  to_port: number | null;
  cidr_ipv4: string | null;
  cidr_ipv6: string | null;
}

interface Sg {
  arn: string;
  id: string;
  name: string | null;
  open_rules: Rule[];
}

/** The rule as revoke-security-group-ingress --ip-permissions takes it (works for IPv4 and IPv6 alike). */
function permission(rule: Rule): string {
  return JSON.stringify({
    IpProtocol: rule.ip_protocol,
    ...(rule.ip_protocol === '-1' ? {} : { FromPort: rule.from_port, ToPort: rule.to_port }),
    ...(rule.cidr_ipv4 ? { IpRanges: [{ CidrIp: rule.cidr_ipv4 }] } : {}),
    ...(rule.cidr_ipv6 ? { Ipv6Ranges: [{ CidrIpv6: rule.cidr_ipv6 }] } : {}),
  });
}

/**
 * A cross-domain toxic combination ("where we can do better" 6): an RDS instance that is
 * `publicly_accessible = true` AND `backup_retention_period = 0` AND `deletion_protection = false`.
 * Each alone is a finding of its own domain (security S7, reliability R2 and R3); together they make a
 * path to an irreversible loss: the endpoint is reachable from the Internet, one delete call (a
 * mistake, a leaked credential, an attacker) removes the instance, and no backup brings it back. The
 * query adds what makes the path concrete: the instance's security groups and which of their ingress
 * rules admit 0.0.0.0/0 or ::/0 to the database port (range containment, protocol -1 included), any
 * manual snapshot, who turned backups off, and what depends on the database. The finding is about the
 * database; its security groups are listed with it. Prowler Attack Paths covers the security half
 * only.
 */
export const toxicUnprotectedPublicDatabase: Detector = {
  id: 'sre.toxic_unprotected_public_database',
  domain: 'sre',
  title: 'Public databases with no backups and no deletion protection',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'engine' as engine,
           coalesce((r.attributes->'endpoint'->>'port')::int, 3306) as port,
           r.attributes->'endpoint'->>'address' as endpoint,
           (r.attributes->>'publicly_accessible')::boolean as publicly_accessible,
           (r.attributes->>'backup_retention_period')::int as backup_retention_period,
           (r.attributes->>'deletion_protection')::boolean as deletion_protection,
           (r.attributes->>'multi_az')::boolean as multi_az,
           ${envOf('r')} as env,
           (select count(*) from resources s
             where s.type = 'aws_rds_db_snapshot' and s.deleted_at is null
               and s.account_id = r.account_id and s.region = r.region
               and s.attributes->>'db_instance_identifier' = r.native_id)::int as manual_snapshots,
           (select jsonb_build_object('at', e.at, 'actor', e.actor) from inventory_events e
             where e.kind = 'cloudtrail' and e.name = 'ModifyDBInstance' and r.arn = any(e.arns)
               and e.payload->'requestParameters'->>'backupRetentionPeriod' = '0'
             order by e.at desc limit 1) as backups_disabled_by,
           (select jsonb_agg(jsonb_build_object(
                     'arn', sg.arn, 'id', sg.native_id, 'name', sg.name,
                     'open_rules', (
                       select coalesce(jsonb_agg(jsonb_build_object(
                                'ip_protocol', rule->>'ip_protocol',
                                'from_port', (rule->>'from_port')::int, 'to_port', (rule->>'to_port')::int,
                                'cidr_ipv4', rule->>'cidr_ipv4', 'cidr_ipv6', rule->>'cidr_ipv6')), '[]'::jsonb)
                       from jsonb_array_elements(${jsonArray("sg.attributes->'rules'")}) rule
                       where coalesce(rule->>'type', 'ingress') = 'ingress'
                         and (rule->>'cidr_ipv4' = '0.0.0.0/0' or rule->>'cidr_ipv6' = '::/0')
                         and (rule->>'ip_protocol' = '-1'
                           or ((rule->>'from_port')::int <= coalesce((r.attributes->'endpoint'->>'port')::int, 3306)
                               and (rule->>'to_port')::int >= coalesce((r.attributes->'endpoint'->>'port')::int, 3306)))))
                   order by sg.arn)
              from resources sg
             where sg.type = 'aws_vpc_security_group' and sg.deleted_at is null
               and sg.account_id = r.account_id and sg.region = r.region
               and (sg.native_id in (select v->>'vpc_security_group_id'
                                       from jsonb_array_elements(${jsonArray("r.attributes->'vpc_security_groups'")}) v)
                 or exists (select 1 from resource_edges pe
                            where pe.from_arn = r.arn and pe.to_arn = sg.arn and pe.kind = 'protected-by'))) as security_groups,
           ${dependentsOf('r')} as dependents
    from resources r
    where r.type = 'aws_rds_db_instance' and r.deleted_at is null
      and (r.attributes->>'publicly_accessible')::boolean = true
      and (r.attributes->>'backup_retention_period')::int = 0
      and (r.attributes->>'deletion_protection')::boolean = false
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const id = str(row.native_id);
      const port = num(row.port);
      const sgs = records<Sg & Record<string, unknown>>(row.security_groups);
      const open = sgs.filter((sg) => records(sg.open_rules).length > 0);
      const sgLabel = (sg: Sg) => (sg.name && sg.name !== sg.id ? `${sg.name} (${sg.id})` : sg.id);
      const dependents = strings(row.dependents);
      const snapshots = num(row.manual_snapshots);
      const disabled = row.backups_disabled_by as { at?: string; actor?: string } | null;
      const who = disabled?.actor ? str(disabled.actor).replace(/^.*[:/]/, '') : null;
      const cidrs = [
        ...new Set(
          open.flatMap((sg) =>
            records<Rule & Record<string, unknown>>(sg.open_rules).map(
              (r) => r.cidr_ipv4 ?? r.cidr_ipv6 ?? '',
            ),
          ),
        ),
      ];
      const exposure = open.length
        ? `its security group${open.length === 1 ? '' : 's'} ${sentenceList(open.map(sgLabel))} admit${open.length === 1 ? 's' : ''} port ${port} from the whole Internet (${sentenceList(cidrs)})`
        : `none of its security groups (${sentenceList(sgs.map(sgLabel)) || 'none found'}) admits port ${port} from 0.0.0.0/0 today, so one rule change away from reachable`;
      return {
        rootKey: row.arn,
        title: `Toxic combination on ${id}: Internet-facing, unbacked-up and deletable in one call`,
        severity: 'critical',
        narrative: `RDS ${str(row.engine)} instance ${id}${envNote(row.env)} combines three weaknesses that each look minor alone. It is publicly accessible${row.endpoint ? ` (its endpoint ${str(row.endpoint)} resolves to a public IP)` : ''} and ${exposure}. It has deletion protection off, so one delete-db-instance call removes it. And it keeps no automated backups (retention 0${who ? `, turned off by ${who}${disabled?.at ? ` on ${str(disabled.at).slice(0, 10)}` : ''}` : ''})${snapshots ? ` and only ${snapshots} manual snapshot(s)` : ' and has no manual snapshot'}, so nothing can bring it back. One mistake, one leaked credential or one attacker can destroy this data for good.${row.multi_az === false ? ' It is single-AZ as well.' : ''}${dependentsSentence(dependents, 'it')}`,
        confidence: 1,
        resources: [
          { arn: row.arn, actionType: 'protect-and-back-up', savings: 0 },
          ...sgs.map((sg) => ({
            arn: sg.arn,
            actionType: records(sg.open_rules).length ? 'restrict-ingress' : 'review-ingress',
            savings: 0,
          })),
        ],
        recommendation: {
          rationale: `Close all three gaps today, cheapest first: (1) take a snapshot now: aws rds create-db-snapshot --db-instance-identifier ${id} --db-snapshot-identifier ${id}-before-hardening; (2) aws rds modify-db-instance --db-instance-identifier ${id} --deletion-protection --backup-retention-period 7 --no-publicly-accessible --apply-immediately; (3) ${open.length ? open.flatMap((sg) => records<Rule & Record<string, unknown>>(sg.open_rules).map((rule) => `aws ec2 revoke-security-group-ingress --group-id ${sg.id} --ip-permissions '${permission(rule)}'`)).join('; ') : 'keep its security groups free of 0.0.0.0/0 rules'}, and reach it from the application's security group or a bastion instead. None of this costs more than a few dollars of backup storage; breaking any one leg of the combination removes the irreversible path.`,
          actionType: 'protect-and-back-up',
          savings: 0,
          effort: 'low',
          priority: 1,
        },
        reasoning: `publicly_accessible = true, backup_retention_period = 0 and deletion_protection = false all hold for ${id}, so severity is critical whatever the environment. ${open.length ? `Ingress from ${cidrs.join(' and ')} covering port ${port} on ${open.map((sg) => sg.id).join(', ')}` : 'No security group rule open to the Internet on the database port'}; ${snapshots} manual snapshot(s); ${dependents.length} dependents in the graph. Savings 0.`,
      };
    });
  },
};
