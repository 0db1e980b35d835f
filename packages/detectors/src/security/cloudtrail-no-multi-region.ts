import type { Detector } from '../detector';
import { unreadFor } from '../unread';
import { label, list, str } from './shared';

interface Trail {
  arn: string;
  name: string;
  region: string;
  home_region: string | null;
  is_multi_region_trail: boolean | null;
  is_logging: boolean | null;
}

/**
 * S8 — accounts without a multi-region CloudTrail trail that is logging: no trail with
 * `is_multi_region_trail AND region = home_region AND is_logging` in the account, nor an organization
 * trail meeting the same conditions in an account of the same organization. An account whose trails the
 * last scan could not read (DescribeTrails refused) is not judged. One finding per account,
 * rooted at the account; its trails (the ones that fall short) are listed with it.
 * (steampipe-mod-aws-compliance `cloudtrail_multi_region_trail_enabled`; Prowler
 * `cloudtrail_multi_region_enabled`; CIS AWS 3.1)
 */
export const cloudtrailNoMultiRegion: Detector = {
  id: 'security.cloudtrail_no_multi_region',
  domain: 'security',
  title: 'Accounts without a multi-region CloudTrail trail',
  sql: `
    with accounts as (
      select a.arn, a.native_id, a.name, a.account_id, a.region,
             a.attributes->>'organization_id' as organization_id
      from resources a
      where a.type = 'aws_account' and a.deleted_at is null
    ),
    trails as (
      select t.arn, t.name, t.account_id, t.region,
             t.attributes->>'home_region' as home_region,
             (t.attributes->>'is_multi_region_trail')::boolean as is_multi_region_trail,
             (t.attributes->>'is_logging')::boolean as is_logging,
             coalesce((t.attributes->>'is_organization_trail')::boolean, false) as is_organization_trail,
             (select o.organization_id from accounts o where o.account_id = t.account_id) as organization_id
      from resources t
      where t.type = 'aws_cloudtrail_trail' and t.deleted_at is null
    ),
    compliant as (
      select * from trails
      where is_multi_region_trail and is_logging and region = coalesce(home_region, region)
    )
    select a.arn, a.native_id, a.name, a.account_id, a.region, a.organization_id,
           (select jsonb_agg(jsonb_build_object('arn', t.arn, 'name', t.name, 'region', t.region,
                     'home_region', t.home_region, 'is_multi_region_trail', t.is_multi_region_trail,
                     'is_logging', t.is_logging) order by t.arn)
              from trails t where t.account_id = a.account_id) as trails
    from accounts a
    where not ${unreadFor('a.account_id', 'aws_cloudtrail_trail')}
      and not exists (
      select 1 from compliant c
      where c.account_id = a.account_id
         or (c.is_organization_trail and c.organization_id is not null and c.organization_id = a.organization_id))
    order by a.arn`,
  findings(rows) {
    return rows.map((row) => {
      const account = label(row);
      const trails = list<Trail>(row.trails);
      const described = trails.map(
        (t) =>
          `${t.name} (${t.region}, ${t.is_multi_region_trail ? 'multi-region' : 'single-region'}, ${t.is_logging ? 'logging' : 'not logging'})`,
      );
      return {
        rootKey: row.arn,
        title: `No multi-region CloudTrail trail logging in account ${account}`,
        severity: 'high',
        narrative: `Account ${account} has no CloudTrail trail that is both multi-region and logging${described.length ? `: its trail${described.length > 1 ? 's are' : ' is'} ${described.join(', ')}` : ': it has no trail at all'}, and no organization trail covers it. API activity in the other regions is not recorded — exactly where an intruder would start unused resources (crypto-mining) or hide changes, and where an investigation would have nothing to read.`,
        confidence: 0.95,
        resources: [
          { arn: row.arn, actionType: 'enable-multi-region-trail', savings: 0 },
          ...trails.map((t) => ({ arn: t.arn, actionType: 'enable-multi-region-trail', savings: 0 })),
        ],
        recommendation: {
          rationale: trails.length
            ? `Make the existing trail multi-region (update-trail --is-multi-region-trail) and keep it logging, or cover the account with an organization trail from the management account. The first copy of management events is free.`
            : `Create a multi-region trail (or an organization trail from the management account) delivering to a locked-down S3 bucket with log file validation.`,
          actionType: 'enable-multi-region-trail',
          savings: 0,
          effort: 'low',
          priority: 2,
        },
        reasoning: `No trail of account ${str(row.account_id)} has is_multi_region_trail AND is_logging (in its home region)${described.length ? `; trails seen: ${described.join(', ')}` : ''}; no organization trail of organization ${str(row.organization_id) || '(unknown)'} does either.`,
      };
    });
  },
};
