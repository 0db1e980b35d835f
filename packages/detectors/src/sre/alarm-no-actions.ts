import { type Detector } from '../detector';
import { jsonArray, records, sentenceList, str, usualAlarmAction } from './common';

/**
 * R4 — CloudWatch alarms that notify no one: `alarm_actions`, `ok_actions` and
 * `insufficient_data_actions` all empty. The alarm changes state and nothing happens. The query names
 * what the alarm watches (its `monitors` edges, else its dimensions) and the topic the account's other
 * alarms use, so the fix can be run as written.
 * (steampipe-mod-aws-compliance `cloudwatch.pp` `cloudwatch_alarm_action_enabled`; Prowler
 * `cloudwatch_alarm_actions_enabled`)
 */
export const alarmNoActions: Detector = {
  id: 'sre.alarm_no_actions',
  domain: 'sre',
  title: 'CloudWatch alarms with no actions',
  sql: `
    select a.arn, a.native_id, a.name, a.account_id, a.region,
           a.attributes->>'namespace' as namespace,
           a.attributes->>'metric_name' as metric_name,
           a.attributes->>'state_value' as state_value,
           a.attributes->'dimensions' as dimensions,
           (select jsonb_agg(jsonb_build_object('arn', t.arn, 'name', coalesce(t.name, t.native_id), 'type', t.type)
                             order by t.arn)
              from resource_edges e join resources t on t.arn = e.to_arn and t.deleted_at is null
             where e.from_arn = a.arn and e.kind = 'monitors') as monitors,
           ${usualAlarmAction('a')} as usual_action
    from resources a
    where a.type = 'aws_cloudwatch_alarm' and a.deleted_at is null
      and jsonb_array_length(${jsonArray("a.attributes->'alarm_actions'")}) = 0
      and jsonb_array_length(${jsonArray("a.attributes->'ok_actions'")}) = 0
      and jsonb_array_length(${jsonArray("a.attributes->'insufficient_data_actions'")}) = 0
    order by a.arn`,
  findings(rows) {
    return rows.map((row) => {
      const name = str(row.native_id);
      const watched = records<{ name: string; type: string }>(row.monitors).map((m) => m.name);
      const dims = records<{ name: string; value: string }>(row.dimensions).map(
        (d) => `${d.name}=${d.value}`,
      );
      const what = watched.length ? sentenceList(watched) : dims.length ? sentenceList(dims) : 'its metric';
      const metric = [str(row.namespace), str(row.metric_name)].filter(Boolean).join(' ');
      const topic = str(row.usual_action);
      return {
        rootKey: row.arn,
        title: `Alarm ${name} notifies no one`,
        severity: 'medium',
        narrative: `CloudWatch alarm ${name}${metric ? ` (${metric})` : ''} watches ${what} but has no alarm, OK or insufficient-data actions: when it fires, no one is paged, no ticket opens and no scaling happens. It is ${str(row.state_value) || 'in an unknown state'} now; an alarm that changes state silently gives a false sense of coverage.`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'add-alarm-actions', savings: 0 }],
        recommendation: {
          rationale: `Point the alarm at the on-call channel${topic ? ` (${topic}, the topic this account's other alarms notify)` : ' (an SNS topic that pages or opens a ticket)'}, or delete it if no one needs it. Run: aws cloudwatch put-metric-alarm with the alarm's current settings plus --alarm-actions ${topic || '<sns-topic-arn>'} --ok-actions ${topic || '<sns-topic-arn>'}.`,
          actionType: 'add-alarm-actions',
          savings: 0,
          effort: 'low',
          priority: 3,
        },
        reasoning: `alarm_actions, ok_actions and insufficient_data_actions are all empty for ${name}; it monitors ${what}. Savings 0: adding actions costs nothing.`,
      };
    });
  },
};
