import { type Detector } from '../detector';
import { byEnv, dependentsOf, dependentsSentence, envNote, envOf, isProd, num, str, strings } from './common';

/**
 * R3 — RDS instances without deletion protection: `deletion_protection = false`, skipping Aurora,
 * DocumentDB and Neptune (their protection is set on the cluster, not the instance). The backup
 * retention is read too: without backups, a deletion cannot be undone at all.
 * (steampipe-mod-aws-compliance `rds_db_instance_deletion_protection_enabled`; Checkov `CKV_AWS_293`)
 */
export const rdsNoDeletionProtection: Detector = {
  id: 'sre.rds_no_deletion_protection',
  domain: 'sre',
  title: 'RDS instances without deletion protection',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'engine' as engine,
           (r.attributes->>'deletion_protection')::boolean as deletion_protection,
           (r.attributes->>'backup_retention_period')::int as backup_retention_period,
           ${envOf('r')} as env,
           ${dependentsOf('r')} as dependents
    from resources r
    where r.type = 'aws_rds_db_instance' and r.deleted_at is null
      and (r.attributes->>'deletion_protection')::boolean = false
      and coalesce(r.attributes->>'engine', '') not like 'aurora%'
      and coalesce(r.attributes->>'engine', '') not in ('docdb', 'neptune')
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const id = str(row.native_id);
      const retention = num(row.backup_retention_period);
      const dependents = strings(row.dependents);
      const severity = byEnv(row.env, 'medium', 'low');
      return {
        rootKey: row.arn,
        title: `Deletion protection off on RDS ${id}`,
        severity,
        narrative: `RDS ${str(row.engine)} instance ${id}${envNote(row.env)} has deletion protection off: one delete-db-instance call (from the console, a script, or a Terraform plan that replaces it) removes it, and --skip-final-snapshot removes the last copy too. ${retention >= 1 ? `Its ${retention} days of automated backups go with it unless the caller passes --no-delete-automated-backups.` : 'It also has no automated backups (retention 0), so a deletion could not be undone.'}${dependentsSentence(dependents, 'it')}`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'enable-deletion-protection', savings: 0 }],
        recommendation: {
          rationale: `Deletion protection makes every delete fail until someone turns it off on purpose; it costs nothing and changes nothing at runtime. Run: aws rds modify-db-instance --db-instance-identifier ${id} --deletion-protection --apply-immediately`,
          actionType: 'enable-deletion-protection',
          savings: 0,
          effort: 'low',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `deletion_protection = false for ${id}, engine ${str(row.engine) || 'unknown'} (not Aurora, DocumentDB or Neptune, whose protection is on the cluster); backup retention ${retention} days. Severity ${severity} from env tag ${str(row.env) || 'absent'}. Savings 0: a setting, no cost change.`,
      };
    });
  },
};
