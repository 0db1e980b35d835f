import type { Detector } from '../detector';
import { list, str } from './shared';

/**
 * S6 — console users without MFA: `password_enabled AND NOT mfa_enabled` (`mfa_active` in the
 * credential report's words, which the AWS connector uses). (steampipe-mod-aws-compliance
 * `iam_user_console_access_mfa_enabled`; Prowler `iam_user_mfa_enabled_console_access`; CIS AWS 1.10)
 */
export const iamConsoleUserNoMfa: Detector = {
  id: 'security.iam_console_user_no_mfa',
  domain: 'security',
  title: 'Console users without MFA',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           (r.attributes->>'password_enabled')::boolean as password_enabled,
           coalesce((r.attributes->>'mfa_enabled')::boolean, (r.attributes->>'mfa_active')::boolean) as mfa_enabled,
           r.attributes->>'password_last_used' as password_last_used,
           coalesce(r.attributes->'attached_policy_arns', '[]'::jsonb) as attached_policy_arns
    from resources r
    where r.type = 'aws_iam_user' and r.deleted_at is null
      and (r.attributes->>'password_enabled')::boolean = true
      and coalesce((r.attributes->>'mfa_enabled')::boolean, (r.attributes->>'mfa_active')::boolean) = false
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const user = str(row.name) || str(row.native_id);
      const policies = list<string>(row.attached_policy_arns).map((a) => a.split('/').pop());
      return {
        rootKey: row.arn,
        title: `IAM user ${user} can sign in to the console without MFA`,
        severity: 'high',
        narrative: `IAM user ${user} (account ${str(row.account_id)}) has a console password and no MFA device${row.password_last_used ? `; the password was last used ${str(row.password_last_used).slice(0, 10)}` : ''}${policies.length ? `. The user holds ${policies.join(', ')}` : ''}. A phished or reused password is all an attacker needs to act as this user in the console.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'enable-mfa', savings: 0 }],
        recommendation: {
          rationale: `Have ${user} register an MFA device (a security key or authenticator), and enforce it with a policy denying everything but MFA setup without aws:MultiFactorAuthPresent; better, move people to IAM Identity Center with MFA and remove the IAM password.`,
          actionType: 'enable-mfa',
          savings: 0,
          effort: 'low',
          priority: 2,
        },
        reasoning: `password_enabled = true and mfa_enabled = false for ${user}.`,
      };
    });
  },
};
