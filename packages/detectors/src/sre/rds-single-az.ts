import { money, round2, type Detector } from '../detector';
import { byEnv, dependentsOf, dependentsSentence, details, envOf, isProd, str, strings } from './common';

/**
 * R1 — single-AZ RDS instances: `multi_az = false`. Aurora engines are skipped at the instance level
 * (Aurora keeps six copies of its storage across three AZs and fails over to cluster replicas, so the
 * instance flag says nothing about the cluster). Severity follows the environment tag, and the
 * narrative names what depends on the database from the graph.
 * (steampipe-mod-aws-compliance `rds.pp` `rds_db_instance_multiple_az_enabled`; Prowler
 * `rds_instance_multi_az`; Checkov `CKV_AWS_157`)
 */
export const rdsSingleAz: Detector = {
  id: 'sre.rds_single_az',
  domain: 'sre',
  title: 'Single-AZ RDS instances',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           coalesce(r.availability_zone, r.attributes->>'availability_zone') as availability_zone,
           r.attributes->>'engine' as engine,
           coalesce(r.attributes->>'class', r.attributes->>'db_instance_class') as db_class,
           (r.attributes->>'multi_az')::boolean as multi_az,
           r.attributes->>'read_replica_source_db_instance_identifier' as replica_of,
           ${envOf('r')} as env,
           r.monthly_cost::float8 as monthly_cost,
           ${dependentsOf('r')} as dependents
    from resources r
    where r.type = 'aws_rds_db_instance' and r.deleted_at is null
      and (r.attributes->>'multi_az')::boolean = false
      and coalesce(r.attributes->>'engine', '') not like 'aurora%'
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const id = str(row.native_id);
      const az = str(row.availability_zone) || 'one Availability Zone';
      const dependents = strings(row.dependents);
      const cost = round2(Number(row.monthly_cost ?? 0));
      const prod = isProd(row.env);
      const severity = byEnv(row.env, 'high', 'medium');
      return {
        rootKey: row.arn,
        title: `RDS ${id} has no standby: single-AZ in ${az}`,
        severity,
        narrative: `RDS ${str(row.engine)} instance ${id}${details(row.db_class, row.env)} runs in a single Availability Zone, ${az}, with no Multi-AZ standby. An AZ outage, a host failure or a maintenance reboot takes it down until AWS recovers the host or someone restores it elsewhere, with no automatic failover.${dependentsSentence(dependents, 'it')}${row.replica_of ? ` It is a read replica of ${str(row.replica_of)}.` : ''}`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'enable-multi-az', savings: 0 }],
        recommendation: {
          rationale: `Multi-AZ keeps a synchronous standby in another AZ and fails over automatically in one to two minutes; the conversion runs online. It adds cost, not savings: the standby is billed like the primary${cost > 0 ? `, about ${money(cost)}/month more at list price (the instance costs ${money(cost)}/month today)` : ''}. Run: aws rds modify-db-instance --db-instance-identifier ${id} --multi-az --apply-immediately`,
          actionType: 'enable-multi-az',
          savings: 0,
          effort: 'low',
          priority: prod ? 2 : 3,
        },
        reasoning: `multi_az = false for ${id} (engine ${str(row.engine) || 'unknown'}, not Aurora, so the instance flag is what decides). Severity ${severity}: env tag ${str(row.env) || 'absent'}${dependents.length ? `, ${dependents.length} dependents in the graph` : ''}. Savings 0: the fix costs money (a standby), it saves none.`,
      };
    });
  },
};
