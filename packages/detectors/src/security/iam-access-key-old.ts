import type { Detector } from '../detector';
import { str } from './shared';

/** The age from which an active access key is reported (compliance `iam_user_access_key_age_90`). */
export const ACCESS_KEY_MAX_AGE_DAYS = 90;

/**
 * S4 — IAM access keys not rotated for 90 days: `status = 'Active' AND create_date <= now − 90 days`,
 * where now is the inventory's clock (its latest snapshot), not the database's.
 * (steampipe-mod-aws-compliance `iam_user_access_key_age_90`; CIS AWS 1.14)
 */
export const iamAccessKeyOld: Detector = {
  id: 'security.iam_access_key_old',
  domain: 'security',
  title: `IAM access keys older than ${ACCESS_KEY_MAX_AGE_DAYS} days`,
  sql: `
    with clock as (select max(observed_at) as now from inventory_snapshots)
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'user_name' as user_name,
           r.attributes->>'status' as status,
           r.attributes->>'create_date' as create_date,
           r.attributes->>'access_key_last_used_date' as last_used_date,
           floor(extract(epoch from (c.now - (r.attributes->>'create_date')::timestamptz)) / 86400)::int as age_days,
           c.now as observed_at
    from resources r, clock c
    where r.type = 'aws_iam_access_key' and r.deleted_at is null
      and r.attributes->>'status' = 'Active'
      and (r.attributes->>'create_date')::timestamptz <= c.now - interval '${ACCESS_KEY_MAX_AGE_DAYS} days'
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const key = str(row.native_id);
      const user = str(row.user_name) || str(row.name);
      const lastUsed = row.last_used_date
        ? `last used ${str(row.last_used_date).slice(0, 10)}`
        : 'never used';
      return {
        rootKey: row.arn,
        title: `Access key ${key} of IAM user ${user} is ${str(row.age_days)} days old`,
        severity: 'medium',
        narrative: `IAM user ${user} (account ${str(row.account_id)}) has an active access key ${key} created on ${str(row.create_date).slice(0, 10)}, ${str(row.age_days)} days ago (${lastUsed}). Long-lived keys end up in laptops, CI logs and old config files; the longer a key lives, the more likely a leaked copy still works.`,
        confidence: 0.95,
        resources: [{ arn: row.arn, actionType: 'rotate-access-key', savings: 0 }],
        recommendation: {
          rationale: `Create a second key for ${user}, move every consumer to it, then deactivate and delete ${key}. Better, replace the key with a role (IAM Identity Center for people, OIDC or instance roles for machines) so there is no long-lived secret to rotate.`,
          actionType: 'rotate-access-key',
          savings: 0,
          effort: 'low',
          priority: 2,
        },
        reasoning: `status = Active and create_date ${str(row.create_date)} <= inventory clock ${str(row.observed_at)} − ${ACCESS_KEY_MAX_AGE_DAYS} days (age ${str(row.age_days)} days).`,
      };
    });
  },
};
