import type { Detector } from '../detector';
import { label, str, where } from './shared';

/**
 * S7 — RDS instances without encryption at rest: `storage_encrypted = false`. Their storage,
 * automated backups, snapshots and read replicas are all in clear.
 * (steampipe-mod-aws-compliance `rds_db_instance_encryption_at_rest_enabled`; Prowler
 * `rds_instance_storage_encrypted`; Checkov `CKV_AWS_16`)
 */
export const rdsUnencrypted: Detector = {
  id: 'security.rds_unencrypted',
  domain: 'security',
  title: 'Unencrypted RDS instances',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'engine' as engine,
           r.attributes->>'class' as class,
           (r.attributes->>'allocated_storage')::int as allocated_storage,
           (r.attributes->>'storage_encrypted')::boolean as storage_encrypted
    from resources r
    where r.type = 'aws_rds_db_instance' and r.deleted_at is null
      and (r.attributes->>'storage_encrypted')::boolean = false
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const db = label(row);
      return {
        rootKey: row.arn,
        title: `RDS instance ${db} stores its data unencrypted`,
        severity: 'medium',
        narrative: `RDS ${str(row.engine)} instance ${db} — ${str(row.class)}, ${str(row.allocated_storage)} GiB, ${where(row)} — has storage_encrypted = false: its data files, automated backups, snapshots and replicas are not encrypted at rest, and access to them is not governed by a KMS key.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'encrypt', savings: 0 }],
        recommendation: {
          rationale: `Encryption cannot be turned on in place: take a snapshot, copy it with a KMS key, restore a new instance from the encrypted copy and switch the endpoint over (or use a read replica / DMS to keep downtime short).`,
          actionType: 'encrypt',
          savings: 0,
          effort: 'high',
          priority: 3,
        },
        reasoning: `storage_encrypted = false on ${str(row.native_id)}.`,
      };
    });
  },
};
