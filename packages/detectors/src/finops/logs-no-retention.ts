import { type Detector } from '../detector';
import { num } from './common';

/**
 * F14 — CloudWatch log groups without retention: `retention_in_days is null` (never expire). The data
 * grows forever; what a retention policy would save depends on the stored bytes beyond the retention
 * chosen and on the storage price, and the reference anchors use no list price for it: the savings
 * are $0, and the stored size is stated instead. (thrifty `cw_log_group_retention`)
 */
export const logsNoRetention: Detector = {
  id: 'finops.logs_no_retention',
  domain: 'finops',
  title: 'Log groups without retention',
  sql: `
    select g.arn, g.native_id, g.name, g.region,
           (g.attributes->>'stored_bytes')::bigint as stored_bytes,
           round((g.attributes->>'stored_bytes')::numeric / 1073741824, 2) as stored_gib,
           g.attributes->>'creation_time' as creation_time
    from resources g
    where g.type = 'aws_cloudwatch_log_group' and g.deleted_at is null
      and g.attributes->>'retention_in_days' is null
    order by g.arn`,
  findings(rows) {
    return rows.map((row) => {
      const gib = num(row.stored_gib);
      const name = String(row.name ?? row.native_id);
      return {
        rootKey: row.arn,
        title: `Log group ${name} keeps logs forever`,
        severity: 'info',
        narrative: `CloudWatch log group ${name} in ${String(row.region)} has no retention setting, so its events never expire; it holds ${gib} GiB today and only grows. Set a retention (30 to 365 days is usual, longer only where an audit rule asks for it). No savings figure is given: it depends on how much data falls outside the retention you choose, and we have no sourced price for log storage.`,
        confidence: 0.95,
        // CloudWatch Logs bills storage per GB-month: what it stores now.
        resources: [
          { arn: row.arn, actionType: 'configure', savings: 0, measured: { value: gib, unit: 'GiB stored' } },
        ],
        recommendation: {
          rationale: `Logs without retention are a cost that only grows (${gib} GiB stored now). A retention policy caps it with one setting and no downtime.`,
          actionType: 'configure',
          savings: 0,
          effort: 'low',
          priority: 4,
        },
        estimatedSavings: 0,
        reasoning: `retention_in_days is null for ${name} ⇒ never expires. stored_bytes = ${num(row.stored_bytes)} (${gib} GiB). The reference gives no list price for log storage, so savings are $0.00 (hygiene finding, severity info).`,
      };
    });
  },
};
