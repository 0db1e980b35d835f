import type { Detector } from '../detector';
import { asArray, label, list, str, where } from './shared';

const ALL_USERS = 'http://acs.amazonaws.com/groups/global/AllUsers';
const AUTHENTICATED_USERS = 'http://acs.amazonaws.com/groups/global/AuthenticatedUsers';

interface Grant {
  grantee?: { uri?: string };
  permission?: string;
}

/**
 * S2 — public S3 bucket. Public by ACL: a grant to AllUsers or AuthenticatedUsers (any permission:
 * the union of the compliance mod's read and write controls) not neutralised by block_public_acls or
 * ignore_public_acls. Public by policy: bucket_policy_is_public (AWS's own policy-status evaluation)
 * not neutralised by block_public_policy or restrict_public_buckets. Critical when the bucket is
 * tagged DataClassification=Sensitive, high otherwise. A bucket whose Block Public Access settings
 * could not be read (GetPublicAccessBlock refused) is not judged: the settings may neutralise both.
 * (steampipe-mod-aws-compliance `s3_bucket_restrict_public_read_access`,
 * `s3_bucket_restrict_public_write_access`; Checkov `CKV_AWS_20`)
 */
export const s3Public: Detector = {
  id: 'security.s3_public',
  domain: 'security',
  title: 'Public S3 buckets',
  sql: `
    with buckets as (
      select r.arn, r.native_id, r.name, r.account_id, r.region, r.tags,
             coalesce((r.attributes->>'block_public_acls')::boolean, false) as block_public_acls,
             coalesce((r.attributes->>'ignore_public_acls')::boolean, false) as ignore_public_acls,
             coalesce((r.attributes->>'block_public_policy')::boolean, false) as block_public_policy,
             coalesce((r.attributes->>'restrict_public_buckets')::boolean, false) as restrict_public_buckets,
             coalesce((r.attributes->>'bucket_policy_is_public')::boolean, false) as bucket_policy_is_public,
             (select jsonb_agg(g)
                from jsonb_array_elements(coalesce(r.attributes->'acl'->'grants', '[]'::jsonb)) as g
                where g->'grantee'->>'uri' in ('${ALL_USERS}', '${AUTHENTICATED_USERS}')) as public_grants,
             (select jsonb_agg(s)
                from jsonb_array_elements(${asArray(`coalesce(r.attributes->'policy_std', r.attributes->'policy')->'Statement'`)}) as s
                where s->>'Effect' = 'Allow'
                  and (s->'Principal' = '"*"'::jsonb or s->'Principal'->'AWS' = '"*"'::jsonb
                       or s->'Principal'->'AWS' @> '["*"]'::jsonb)) as public_statements
      from resources r
      where r.type = 'aws_s3_bucket' and r.deleted_at is null
        and not coalesce(r.attributes->'unreadable' @> '["GetPublicAccessBlock"]'::jsonb, false)
    )
    select b.arn, b.native_id, b.name, b.account_id, b.region,
           b.tags->>'DataClassification' as data_classification,
           b.public_grants is not null and not b.block_public_acls and not b.ignore_public_acls as public_by_acl,
           b.bucket_policy_is_public and not b.block_public_policy and not b.restrict_public_buckets as public_by_policy,
           b.public_grants, b.public_statements,
           b.block_public_acls, b.ignore_public_acls, b.block_public_policy, b.restrict_public_buckets,
           b.bucket_policy_is_public
    from buckets b
    where (b.public_grants is not null and not b.block_public_acls and not b.ignore_public_acls)
       or (b.bucket_policy_is_public and not b.block_public_policy and not b.restrict_public_buckets)
    order by b.arn`,
  findings(rows) {
    return rows.map((row) => {
      const bucket = label(row);
      const sensitive = str(row.data_classification).toLowerCase() === 'sensitive';
      const grants = list<Grant>(row.public_grants).map(
        (g) => `${str(g.permission)} to ${str(g.grantee?.uri).split('/').pop()}`,
      );
      const statements = list<Record<string, unknown>>(row.public_statements).map(
        (s) =>
          `${s.Sid ? `${str(s.Sid)}: ` : ''}Allow ${JSON.stringify(s.Action)} on ${JSON.stringify(s.Resource)} to Principal *`,
      );
      const how = [
        row.public_by_acl ? `its ACL grants ${grants.join(', ')}` : null,
        row.public_by_policy
          ? `its bucket policy is public${statements.length ? ` (${statements.join('; ')})` : ''}`
          : null,
      ].filter(Boolean);
      const by = [row.public_by_acl ? 'ACL' : null, row.public_by_policy ? 'bucket policy' : null]
        .filter(Boolean)
        .join(' and ');
      return {
        rootKey: row.arn,
        title: `S3 bucket ${bucket} is public (by ${by})${sensitive ? ', and tagged Sensitive' : ''}`,
        severity: sensitive ? 'critical' : 'high',
        narrative: `S3 bucket ${bucket} — ${where(row)} — can be read by anyone on the Internet: ${how.join('; and ')}. The bucket's Block Public Access settings do not stop it (block_public_acls ${String(row.block_public_acls)}, ignore_public_acls ${String(row.ignore_public_acls)}, block_public_policy ${String(row.block_public_policy)}, restrict_public_buckets ${String(row.restrict_public_buckets)}).${sensitive ? ' It is tagged DataClassification=Sensitive: this is a data exposure, not a website.' : ''}`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'block-public-access', savings: 0 }],
        recommendation: {
          rationale: sensitive
            ? `Sensitive data must not be public. Turn on all four Block Public Access settings on ${bucket} (and at the account level), then give partners access through presigned URLs or a policy naming their principals.`
            : `Turn on Block Public Access (ignore_public_acls and restrict_public_buckets neutralise what exists; block_public_acls and block_public_policy stop it coming back). If the content is meant for the web, serve it through CloudFront with origin access control instead of a public bucket.`,
          actionType: 'block-public-access',
          savings: 0,
          effort: 'low',
          priority: sensitive ? 1 : 2,
        },
        reasoning: `${row.public_by_acl ? `Public ACL grant(s): ${grants.join(', ')}, with block_public_acls = ${String(row.block_public_acls)} and ignore_public_acls = ${String(row.ignore_public_acls)}. ` : ''}${row.public_by_policy ? `bucket_policy_is_public = true, with block_public_policy = ${String(row.block_public_policy)} and restrict_public_buckets = ${String(row.restrict_public_buckets)}. ` : ''}Tag DataClassification = ${str(row.data_classification) || '(none)'}, hence severity ${sensitive ? 'critical' : 'high'}.`,
      };
    });
  },
};
