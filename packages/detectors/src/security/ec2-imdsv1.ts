import type { Detector } from '../detector';
import { label, str, where } from './shared';

/**
 * S9 — instances that still answer IMDSv1: `metadata_options.http_tokens <> 'required'` (an instance
 * whose metadata options are unknown is not claimed; one with the endpoint disabled has no IMDS to
 * abuse). One finding per instance. High when the instance has a public IP and an instance profile —
 * an SSRF in what it serves hands out the role's credentials — medium otherwise.
 * (steampipe-mod-aws-compliance `ec2_instance_uses_imdsv2`; Prowler `ec2_instance_imdsv2_enabled`;
 * Checkov `CKV_AWS_79`)
 */
export const ec2Imdsv1: Detector = {
  id: 'security.ec2_imdsv1',
  domain: 'security',
  title: 'Instances allowing IMDSv1',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'instance_state' as instance_state,
           r.attributes->'metadata_options'->>'http_tokens' as http_tokens,
           r.attributes->'metadata_options'->>'http_endpoint' as http_endpoint,
           r.attributes->>'public_ip_address' as public_ip,
           r.attributes->>'iam_instance_profile_arn' as instance_profile_arn
    from resources r
    where r.type = 'aws_ec2_instance' and r.deleted_at is null
      and coalesce(r.attributes->>'instance_state', 'running') not in ('terminated', 'shutting-down')
      and r.attributes->'metadata_options'->>'http_tokens' <> 'required'
      and coalesce(r.attributes->'metadata_options'->>'http_endpoint', 'enabled') <> 'disabled'
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const instance = label(row);
      const exposed = Boolean(row.public_ip) && Boolean(row.instance_profile_arn);
      const profile = str(row.instance_profile_arn).split('/').pop();
      return {
        rootKey: row.arn,
        title: `Instance ${instance} accepts IMDSv1 (http_tokens ${str(row.http_tokens)})`,
        severity: exposed ? 'high' : 'medium',
        narrative: `Instance ${instance} — ${str(row.instance_state)}, ${where(row)} — answers instance-metadata requests without a session token (http_tokens = ${str(row.http_tokens)}). Any server-side request forgery or open proxy on it can read http://169.254.169.254/ — including ${row.instance_profile_arn ? `the temporary credentials of instance profile ${profile}` : 'any role attached later'}.${row.public_ip ? ` It has a public IP (${str(row.public_ip)}).` : ''}`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'require-imdsv2', savings: 0 }],
        recommendation: {
          rationale: `Require IMDSv2: modify-instance-metadata-options --http-tokens required (no restart; check first that the SDKs/agents on it are IMDSv2-capable, CloudWatch metric MetadataNoToken shows remaining v1 calls), and set it in the launch template or AMI defaults so replacements keep it.`,
          actionType: 'require-imdsv2',
          savings: 0,
          effort: 'low',
          priority: exposed ? 2 : 3,
        },
        reasoning: `metadata_options.http_tokens = ${str(row.http_tokens)} (not 'required'), http_endpoint = ${str(row.http_endpoint) || 'enabled'}; public IP ${str(row.public_ip) || 'none'}, instance profile ${profile || 'none'}, hence ${exposed ? 'high' : 'medium'}.`,
      };
    });
  },
};
