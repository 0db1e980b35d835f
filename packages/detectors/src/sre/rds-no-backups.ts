import { type Detector } from '../detector';
import { byEnv, dependentsOf, dependentsSentence, envNote, envOf, isProd, num, str, strings } from './common';

/**
 * R2 — RDS instances without automated backups: `backup_retention_period < 1` (the stricter variant
 * is `< 7`). With retention 0 there is no point-in-time restore and no automated snapshot. The query
 * also reads what else could bring the data back (manual snapshots of the instance), the retention it
 * had before (resource history) and who turned it off (CloudTrail ModifyDBInstance), so the narrative
 * says how and when the protection went away.
 * (steampipe-mod-aws-compliance `rds_db_instance_backup_enabled`; Prowler `rds_instance_backup_enabled`;
 * Checkov `CKV_AWS_133`)
 */
export const rdsNoBackups: Detector = {
  id: 'sre.rds_no_backups',
  domain: 'sre',
  title: 'RDS instances without automated backups',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'engine' as engine,
           (r.attributes->>'backup_retention_period')::int as backup_retention_period,
           ${envOf('r')} as env,
           (select count(*) from resources s
             where s.type = 'aws_rds_db_snapshot' and s.deleted_at is null
               and s.account_id = r.account_id and s.region = r.region
               and s.attributes->>'db_instance_identifier' = r.native_id)::int as manual_snapshots,
           (select max(s.attributes->>'snapshot_create_time') from resources s
             where s.type = 'aws_rds_db_snapshot' and s.deleted_at is null
               and s.account_id = r.account_id and s.region = r.region
               and s.attributes->>'db_instance_identifier' = r.native_id) as latest_snapshot,
           (select (h.before->'attributes'->>'backup_retention_period')::int from resource_history h
             where h.arn = r.arn and h.change = 'updated'
               and (h.before->'attributes'->>'backup_retention_period')::int >= 1
             order by h.observed_at desc limit 1) as previous_retention,
           (select jsonb_build_object('at', e.at, 'actor', e.actor) from inventory_events e
             where e.kind = 'cloudtrail' and e.name = 'ModifyDBInstance' and r.arn = any(e.arns)
               and e.payload->'requestParameters'->>'backupRetentionPeriod' = '0'
             order by e.at desc limit 1) as disabled_by,
           ${dependentsOf('r')} as dependents
    from resources r
    where r.type = 'aws_rds_db_instance' and r.deleted_at is null
      and (r.attributes->>'backup_retention_period')::int < 1
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const id = str(row.native_id);
      const snapshots = num(row.manual_snapshots);
      const dependents = strings(row.dependents);
      const disabled = row.disabled_by as { at?: string; actor?: string } | null;
      const who = disabled?.actor ? str(disabled.actor).replace(/^.*[:/]/, '') : null;
      const when = disabled?.at ? str(disabled.at).slice(0, 10) : null;
      const known = row.previous_retention !== null && row.previous_retention !== undefined;
      const history = known
        ? ` It had ${num(row.previous_retention)} days of retention before${who ? `: ${who} set it to 0${when ? ` on ${when}` : ''} (CloudTrail ModifyDBInstance)` : ''}.`
        : who
          ? ` ${who} set the retention to 0${when ? ` on ${when}` : ''} (CloudTrail ModifyDBInstance).`
          : '';
      const severity = byEnv(row.env, 'high', 'medium');
      return {
        rootKey: row.arn,
        title: `No automated backups for RDS ${id} (retention ${num(row.backup_retention_period)} days)`,
        severity,
        narrative: `RDS ${str(row.engine)} instance ${id}${envNote(row.env)} has backup_retention_period = ${num(row.backup_retention_period)}: RDS takes no automated snapshots and keeps no transaction logs, so there is no point-in-time restore. ${snapshots ? `The only copies are ${snapshots} manual snapshot(s), the latest from ${str(row.latest_snapshot).slice(0, 10)}; anything written since is unrecoverable.` : 'There is no manual snapshot either: a bad migration, a dropped table or a deleted instance loses the data for good.'}${history}${dependentsSentence(dependents, 'it')}`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'enable-backups', savings: 0 }],
        recommendation: {
          rationale: `Automated backups give point-in-time restore to any second in the retention window; backup storage up to the database's size is free, and 7 days is the usual floor. Run: aws rds modify-db-instance --db-instance-identifier ${id} --backup-retention-period 7 --apply-immediately (it takes a first snapshot right away).`,
          actionType: 'enable-backups',
          savings: 0,
          effort: 'low',
          priority: isProd(row.env) ? 1 : 2,
        },
        reasoning: `backup_retention_period = ${num(row.backup_retention_period)} < 1 for ${id}; ${snapshots} manual snapshot(s) of it in the inventory${known ? `; resource history shows ${num(row.previous_retention)} days before the change` : ''}${who ? `; CloudTrail names ${str(disabled?.actor)} as the actor` : ''}. Severity ${severity} from env tag ${str(row.env) || 'absent'}. Savings 0: backups cost (a little), they save nothing.`,
      };
    });
  },
};
