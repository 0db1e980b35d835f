import type { Detector } from '../detector';
import { label, str } from './shared';

/**
 * S5 — root user without MFA: the account summary's `account_mfa_enabled = false` (unknown is not
 * claimed). (steampipe-mod-aws-compliance `iam_root_user_mfa_enabled`; Prowler `iam_root_mfa_enabled`;
 * CIS AWS 1.5)
 */
export const rootMfaDisabled: Detector = {
  id: 'security.root_mfa_disabled',
  domain: 'security',
  title: 'Root users without MFA',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           (r.attributes->>'account_mfa_enabled')::boolean as account_mfa_enabled,
           r.attributes->>'account_access_keys_present' as account_access_keys_present
    from resources r
    where r.type = 'aws_account' and r.deleted_at is null
      and (r.attributes->>'account_mfa_enabled')::boolean = false
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const account = label(row);
      return {
        rootKey: row.arn,
        title: `Root user of account ${account} has no MFA`,
        severity: 'critical',
        narrative: `The root user of AWS account ${account} signs in with a password alone (account_mfa_enabled = false). Root can do anything in the account — close it, remove every other user's access, disable logging — and no policy can restrict it; a phished or reused password is a full takeover.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'enable-mfa', savings: 0 }],
        recommendation: {
          rationale: `Sign in as root once, register a hardware security key or authenticator (two, kept apart), make sure root has no access keys, and store the credentials for break-glass use only.`,
          actionType: 'enable-mfa',
          savings: 0,
          effort: 'low',
          priority: 1,
        },
        reasoning: `account_mfa_enabled = false in the IAM account summary of ${str(row.account_id)}.`,
      };
    });
  },
};
