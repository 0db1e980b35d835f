import type { Detector } from '../detector';
import { label, list, str, where } from './shared';

interface Attachment {
  instance_id: string;
  instance_name: string | null;
  device: string | null;
}

/**
 * S3 — unencrypted EBS volumes: `encrypted = false` (a volume whose encryption is unknown is not
 * claimed). Data at rest, its snapshots and the volumes restored from them are all in clear.
 * (steampipe-mod-aws-compliance `ebs_volume_encryption_at_rest_enabled`; Prowler
 * `ec2_ebs_volume_encryption`; Checkov `CKV_AWS_3`)
 */
export const ebsUnencrypted: Detector = {
  id: 'security.ebs_unencrypted',
  domain: 'security',
  title: 'Unencrypted EBS volumes',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'volume_type' as volume_type,
           (r.attributes->>'size')::int as size_gb,
           r.attributes->>'state' as state,
           (r.attributes->>'encrypted')::boolean as encrypted,
           (select jsonb_agg(jsonb_build_object('instance_id', a->>'instance_id', 'device', a->>'device',
                     'instance_name', (select i.name from resources i
                                       where i.type = 'aws_ec2_instance' and i.deleted_at is null
                                         and i.native_id = a->>'instance_id' limit 1)))
              from jsonb_array_elements(coalesce(r.attributes->'attachments', '[]'::jsonb)) as a) as attachments
    from resources r
    where r.type = 'aws_ebs_volume' and r.deleted_at is null
      and (r.attributes->>'encrypted')::boolean = false
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const volume = label(row);
      const attached = list<Attachment>(row.attachments).map(
        (a) =>
          `${a.instance_name ? `${a.instance_name} (${a.instance_id})` : a.instance_id}${a.device ? ` as ${a.device}` : ''}`,
      );
      return {
        rootKey: row.arn,
        title: `Unencrypted EBS volume ${volume}: ${str(row.size_gb)} GiB ${str(row.volume_type)}`,
        severity: 'medium',
        narrative: `EBS volume ${volume} — ${str(row.size_gb)} GiB ${str(row.volume_type)}, ${where(row)} — is not encrypted${attached.length ? `; it is attached to ${attached.join(', ')}` : ' and attached to nothing'}. Its data at rest, every snapshot taken of it and every volume restored from those snapshots are in clear, outside KMS access control and audit.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'encrypt', savings: 0 }],
        recommendation: {
          rationale: `A volume cannot be encrypted in place: snapshot ${str(row.native_id)}, copy the snapshot with encryption (KMS key), create a volume from the copy and swap it in during a maintenance window${attached.length ? ` on ${attached.join(', ')}` : ''}. Turn on EBS encryption by default in the region so new volumes are encrypted.`,
          actionType: 'encrypt',
          savings: 0,
          effort: 'medium',
          priority: 3,
        },
        reasoning: `encrypted = false on ${str(row.native_id)} (state ${str(row.state)}${attached.length ? `, attachments: ${attached.join(', ')}` : ''}).`,
      };
    });
  },
};
