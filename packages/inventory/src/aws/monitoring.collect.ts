import {
  CloudTrailClient,
  DescribeTrailsCommand,
  GetTrailStatusCommand,
  paginateListTags,
} from '@aws-sdk/client-cloudtrail';
import { CloudWatchClient, paginateDescribeAlarms } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient, paginateDescribeLogGroups } from '@aws-sdk/client-cloudwatch-logs';
import { readOrNull, tolerate, type CollectContext } from './collect-context';
import { allPages, chunk, iso, mapBounded, orNull, snakeList, tagRecord } from './shape';

/**
 * CloudTrail trails. DescribeTrails (not paginated) with shadow trails lists, in every region, the
 * multi-region and organization trails homed elsewhere; a trail is kept by its home region, or by
 * whichever region sees it first when its home region is not part of the sync.
 */
export async function collectCloudTrail(ctx: CollectContext): Promise<void> {
  const { out, region } = ctx;
  const client = ctx.client(CloudTrailClient);
  const res = await client.send(new DescribeTrailsCommand({ includeShadowTrails: true }), ctx.send);
  const trails = (res.trailList ?? []).filter(
    (t) => t.TrailARN && (t.HomeRegion === region || !t.HomeRegion || !ctx.regions.includes(t.HomeRegion)),
  );
  // Tags can be listed only for trails of this account, from their home region.
  const own = trails
    .filter((t) => t.HomeRegion === region && t.TrailARN?.split(':')[4] === out.accountId)
    .map((t) => t.TrailARN as string);
  const tags = new Map<string, Record<string, string>>();
  // Denied, the trails are kept with their tags unknown (`unreadable`), not the whole service.
  const tagsDenied = await readOrNull(
    'ListTags',
    [],
    (async () => {
      for (const ResourceIdList of chunk(own, 20)) {
        for await (const page of paginateListTags({ client }, { ResourceIdList }, ctx.send)) {
          for (const t of page.ResourceTagList ?? [])
            if (t.ResourceId) tags.set(t.ResourceId, tagRecord(t.TagsList));
        }
      }
      return false;
    })(),
  ).then((r) => r === null);
  await mapBounded(trails, ctx.width, async (t) => {
    const arn = t.TrailARN as string;
    // An organization trail seen from a member account may not be readable from here.
    const status = await tolerate(client.send(new GetTrailStatusCommand({ Name: arn }), ctx.send), [
      'TrailNotFoundException',
    ]);
    const s = status.ok ? status.value : undefined;
    const logGroup = t.CloudWatchLogsLogGroupArn?.replace(/:\*$/, '') ?? null;
    out.add({
      type: 'aws_cloudtrail_trail',
      arn,
      nativeId: orNull(t.Name) ?? arn,
      region: t.HomeRegion ?? region,
      name: orNull(t.Name),
      tags: tags.get(arn) ?? {},
      attributes: {
        name: orNull(t.Name),
        arn,
        home_region: orNull(t.HomeRegion),
        is_multi_region_trail: orNull(t.IsMultiRegionTrail),
        is_organization_trail: orNull(t.IsOrganizationTrail),
        include_global_service_events: orNull(t.IncludeGlobalServiceEvents),
        log_file_validation_enabled: orNull(t.LogFileValidationEnabled),
        has_custom_event_selectors: orNull(t.HasCustomEventSelectors),
        has_insight_selectors: orNull(t.HasInsightSelectors),
        s3_bucket_name: orNull(t.S3BucketName),
        s3_key_prefix: orNull(t.S3KeyPrefix),
        sns_topic_arn: orNull(t.SnsTopicARN),
        kms_key_id: orNull(t.KmsKeyId),
        cloudwatch_logs_log_group_arn: logGroup,
        is_logging: s ? orNull(s.IsLogging) : null,
        latest_delivery_time: iso(s?.LatestDeliveryTime),
        latest_delivery_error: s?.LatestDeliveryError || null,
        start_logging_time: iso(s?.StartLoggingTime),
        stop_logging_time: iso(s?.StopLoggingTime),
        unreadable: [
          ...(tagsDenied && own.includes(arn) ? ['ListTags'] : []),
          ...(!status.ok && status.denied ? ['GetTrailStatus'] : []),
        ],
      },
    });
    if (t.S3BucketName) out.link(arn, out.s3Arn(t.S3BucketName), 'depends-on');
    out.link(arn, logGroup, 'depends-on');
  });
}

/** Metric and composite alarms; the link pass turns their dimensions into `monitors` edges. */
export async function collectAlarms(ctx: CollectContext): Promise<void> {
  const { out, region } = ctx;
  const client = ctx.client(CloudWatchClient);
  const input = { AlarmTypes: ['MetricAlarm' as const, 'CompositeAlarm' as const] };
  for await (const page of paginateDescribeAlarms({ client, pageSize: 100 }, input, ctx.send)) {
    for (const a of page.MetricAlarms ?? []) {
      if (!a.AlarmArn || !a.AlarmName) continue;
      out.add({
        type: 'aws_cloudwatch_alarm',
        arn: a.AlarmArn,
        nativeId: a.AlarmName,
        region,
        name: a.AlarmName,
        attributes: {
          alarm_name: a.AlarmName,
          alarm_arn: a.AlarmArn,
          alarm_type: 'MetricAlarm',
          alarm_description: orNull(a.AlarmDescription),
          namespace: orNull(a.Namespace),
          metric_name: orNull(a.MetricName),
          dimensions: (a.Dimensions ?? []).map((d) => ({ name: orNull(d.Name), value: orNull(d.Value) })),
          metrics: snakeList(a.Metrics),
          statistic: orNull(a.Statistic),
          extended_statistic: orNull(a.ExtendedStatistic),
          period: orNull(a.Period),
          evaluation_periods: orNull(a.EvaluationPeriods),
          datapoints_to_alarm: orNull(a.DatapointsToAlarm),
          threshold: orNull(a.Threshold),
          comparison_operator: orNull(a.ComparisonOperator),
          treat_missing_data: orNull(a.TreatMissingData),
          actions_enabled: orNull(a.ActionsEnabled),
          alarm_actions: a.AlarmActions ?? [],
          ok_actions: a.OKActions ?? [],
          insufficient_data_actions: a.InsufficientDataActions ?? [],
          state_value: orNull(a.StateValue),
          state_reason: orNull(a.StateReason),
          state_updated_timestamp: iso(a.StateUpdatedTimestamp),
        },
      });
    }
    for (const a of page.CompositeAlarms ?? []) {
      if (!a.AlarmArn || !a.AlarmName) continue;
      out.add({
        type: 'aws_cloudwatch_alarm',
        arn: a.AlarmArn,
        nativeId: a.AlarmName,
        region,
        name: a.AlarmName,
        attributes: {
          alarm_name: a.AlarmName,
          alarm_arn: a.AlarmArn,
          alarm_type: 'CompositeAlarm',
          alarm_description: orNull(a.AlarmDescription),
          alarm_rule: orNull(a.AlarmRule),
          dimensions: [],
          actions_enabled: orNull(a.ActionsEnabled),
          alarm_actions: a.AlarmActions ?? [],
          ok_actions: a.OKActions ?? [],
          insufficient_data_actions: a.InsufficientDataActions ?? [],
          state_value: orNull(a.StateValue),
          state_reason: orNull(a.StateReason),
          state_updated_timestamp: iso(a.StateUpdatedTimestamp),
        },
      });
    }
  }
}

export async function collectLogGroups(ctx: CollectContext): Promise<void> {
  const { out, region } = ctx;
  const client = ctx.client(CloudWatchLogsClient);
  const groups = await allPages(
    paginateDescribeLogGroups({ client, pageSize: 50 }, {}, ctx.send),
    (p) => p.logGroups,
  );
  for (const g of groups) {
    if (!g.logGroupName) continue;
    // `arn` ends in ":*" (the log streams); `logGroupArn` is the group's own ARN.
    const arn =
      g.logGroupArn ??
      g.arn?.replace(/:\*$/, '') ??
      `arn:${out.partition}:logs:${region}:${out.accountId}:log-group:${g.logGroupName}`;
    out.add({
      type: 'aws_cloudwatch_log_group',
      arn,
      nativeId: g.logGroupName,
      region,
      name: g.logGroupName,
      attributes: {
        name: g.logGroupName,
        arn,
        retention_in_days: orNull(g.retentionInDays),
        stored_bytes: orNull(g.storedBytes),
        creation_time: iso(g.creationTime),
        metric_filter_count: orNull(g.metricFilterCount),
        kms_key_id: orNull(g.kmsKeyId),
        log_group_class: orNull(g.logGroupClass),
        data_protection_status: orNull(g.dataProtectionStatus),
      },
    });
  }
}
