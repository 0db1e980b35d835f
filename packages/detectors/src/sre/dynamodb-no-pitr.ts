import { type Detector } from '../detector';
import { byEnv, dependentsOf, dependentsSentence, details, envOf, isProd, num, str, strings } from './common';

/**
 * R8 — DynamoDB tables with point-in-time recovery off:
 * `point_in_time_recovery_description.point_in_time_recovery_status = 'DISABLED'`. A bad write, a
 * buggy batch job or a deleted item cannot be rolled back to a second in the last 35 days.
 * (steampipe-mod-aws-compliance `dynamodb_table_point_in_time_recovery_enabled`)
 */
export const dynamodbNoPitr: Detector = {
  id: 'sre.dynamodb_no_pitr',
  domain: 'sre',
  title: 'DynamoDB tables without point-in-time recovery',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->'point_in_time_recovery_description'->>'point_in_time_recovery_status' as pitr_status,
           (r.attributes->>'item_count')::bigint as item_count,
           (r.attributes->>'table_size_bytes')::bigint as table_size_bytes,
           (r.attributes->>'deletion_protection_enabled')::boolean as deletion_protection_enabled,
           ${envOf('r')} as env,
           ${dependentsOf('r')} as dependents
    from resources r
    where r.type = 'aws_dynamodb_table' and r.deleted_at is null
      and r.attributes->'point_in_time_recovery_description'->>'point_in_time_recovery_status' = 'DISABLED'
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const name = str(row.native_id);
      const gb = num(row.table_size_bytes) / 1024 ** 3;
      const items = num(row.item_count);
      const dependents = strings(row.dependents);
      const severity = byEnv(row.env, 'high', 'medium');
      return {
        rootKey: row.arn,
        title: `Point-in-time recovery disabled on DynamoDB table ${name}`,
        severity,
        narrative: `DynamoDB table ${name}${details(items ? `${items.toLocaleString('en-US')} items` : null, gb ? `${gb.toFixed(1)} GiB` : null, row.env)} has point-in-time recovery DISABLED: a bad deploy that overwrites items, a runaway batch delete or a wrong script cannot be rolled back to the minute before. Only on-demand backups, if anyone took them, could restore it.${row.deletion_protection_enabled === false ? ' Deletion protection is off too.' : ''}${dependentsSentence(dependents, 'the table')}`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'enable-pitr', savings: 0 }],
        recommendation: {
          rationale: `PITR keeps continuous backups for 35 days and restores to any second, with no impact on the table's performance; it is billed per GB of table size (a cost, not a saving). Run: aws dynamodb update-continuous-backups --table-name ${name} --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true`,
          actionType: 'enable-pitr',
          savings: 0,
          effort: 'low',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `point_in_time_recovery_status = ${str(row.pitr_status)} for ${name}. Severity ${severity} from env tag ${str(row.env) || 'absent'}. Savings 0.`,
      };
    });
  },
};
