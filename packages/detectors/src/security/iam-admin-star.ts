import type { Detector } from '../detector';
import { asArray, list, str } from './shared';

interface StarStatement {
  policy_name: string | null;
  statement: Record<string, unknown>;
}

const KIND: Record<string, string> = {
  aws_iam_role: 'IAM role',
  aws_iam_user: 'IAM user',
  aws_iam_policy: 'customer-managed policy',
};

/**
 * S10 — administrator `*:*` policies: a statement with Effect Allow, Action `*` and Resource `*`
 * (each a string or a list containing it) in an inline policy of a role or a user, or in a
 * customer-managed policy (the compliance mod's check covers those; AWS-managed policies such as
 * AdministratorAccess are AWS's, not reported). One finding per principal or policy.
 * (steampipe-mod-aws-compliance `iam_policy_no_star_star`; Prowler
 * `iam_inline_policy_no_administrative_privileges`, attack-path query "IAM Statements Allowing All
 * Actions")
 */
export const iamAdminStar: Detector = {
  id: 'security.iam_admin_star',
  domain: 'security',
  title: 'IAM policies allowing * on *',
  sql: `
    with documents as (
      select r.arn, r.type, r.native_id, r.name, r.account_id, r.region, p->>'policy_name' as policy_name,
             coalesce(p->'policy', p->'policy_document') as document
      from resources r, jsonb_array_elements(${asArray(`r.attributes->'inline_policies'`)}) as p
      where r.type in ('aws_iam_role', 'aws_iam_user') and r.deleted_at is null
      union all
      select r.arn, r.type, r.native_id, r.name, r.account_id, r.region, r.name,
             coalesce(r.attributes->'policy_document', r.attributes->'policy')
      from resources r
      where r.type = 'aws_iam_policy' and r.deleted_at is null
    ),
    statements as (
      select d.arn, d.type, d.native_id, d.name, d.account_id, d.region, d.policy_name, s as statement
      from documents d, jsonb_array_elements(${asArray(`d.document->'Statement'`)}) as s
    )
    select arn, type, native_id, name, account_id, region,
           jsonb_agg(jsonb_build_object('policy_name', policy_name, 'statement', statement)
                     order by policy_name) as statements
    from statements
    where statement->>'Effect' = 'Allow'
      and ${asArray(`statement->'Action'`)} @> '["*"]'::jsonb
      and ${asArray(`statement->'Resource'`)} @> '["*"]'::jsonb
    group by arn, type, native_id, name, account_id, region
    order by arn`,
  findings(rows) {
    return rows.map((row) => {
      const kind = KIND[str(row.type)] ?? str(row.type);
      const name = str(row.name) || str(row.native_id);
      const statements = list<StarStatement>(row.statements);
      const policies = [...new Set(statements.map((s) => s.policy_name ?? '(unnamed)'))];
      const inline = row.type !== 'aws_iam_policy';
      return {
        rootKey: row.arn,
        title: `${kind} ${name} ${inline ? `has an inline policy allowing` : 'allows'} * on *`,
        severity: 'high',
        narrative: `${kind} ${name} (account ${str(row.account_id)}) is an administrator: ${inline ? `its inline ${policies.length === 1 ? 'policy' : 'policies'} ${policies.join(', ')} allow${policies.length === 1 ? 's' : ''}` : 'the policy allows'} every action on every resource (${statements.map((s) => JSON.stringify(s.statement)).join('; ')}). Whoever can use it — a CI job, a leaked token, a compromised workload — can do anything in the account, including granting itself more and erasing its tracks.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'least-privilege', savings: 0 }],
        recommendation: {
          rationale: `Replace the * / * statement with the actions and resources ${name} actually uses (IAM Access Analyzer can generate a policy from its CloudTrail activity), and add a permissions boundary so it cannot grant itself more.`,
          actionType: 'least-privilege',
          savings: 0,
          effort: 'medium',
          priority: 2,
        },
        reasoning: `${statements.length === 1 ? 'A statement' : `${statements.length} statements`} with Effect = Allow, Action ∋ "*" and Resource ∋ "*" in ${policies.join(', ')} of ${str(row.arn)}.`,
      };
    });
  },
};
