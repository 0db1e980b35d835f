// CloudWatch alarms and log groups, CloudTrail trails, Route 53 records.
import type { ResourceType } from '../model';
import { arnOf, idOf, type Draft, type Registry, type TfRow } from './registry';
import { block, blocks, bool, num, str, strMap, strs } from './values';

const DIMENSION_TYPES: Record<string, ResourceType> = {
  DBInstanceIdentifier: 'aws_rds_db_instance',
  InstanceId: 'aws_ec2_instance',
  VolumeId: 'aws_ebs_volume',
  NatGatewayId: 'aws_vpc_nat_gateway',
  AutoScalingGroupName: 'aws_ec2_autoscaling_group',
  TableName: 'aws_dynamodb_table',
  ReplicationGroupId: 'aws_elasticache_replication_group',
  FunctionName: 'aws_lambda_function',
  BucketName: 'aws_s3_bucket',
};

function mapAlarm(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.alarm_name) ?? idOf(row);
  // Metric-math alarms carry their dimensions inside each metric query.
  const dimensionMaps = [
    strMap(v.dimensions),
    ...blocks(v.metric_query).flatMap((q) => blocks(q.metric).map((m) => strMap(m.dimensions))),
  ];
  const dimensions = dimensionMaps.flatMap((d) =>
    Object.entries(d).map(([n, value]) => ({ name: n, value })),
  );
  const alarm = reg.add(row, 'aws_cloudwatch_alarm', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('cloudwatch', `alarm:${name}`),
    attributes: {
      alarm_name: name,
      alarm_description: str(v.alarm_description),
      namespace: str(v.namespace),
      metric_name: str(v.metric_name),
      dimensions,
      statistic: str(v.statistic),
      extended_statistic: str(v.extended_statistic),
      period: num(v.period),
      evaluation_periods: num(v.evaluation_periods),
      datapoints_to_alarm: num(v.datapoints_to_alarm),
      threshold: num(v.threshold),
      comparison_operator: str(v.comparison_operator),
      treat_missing_data: str(v.treat_missing_data),
      actions_enabled: bool(v.actions_enabled) ?? true,
      alarm_actions: strs(v.alarm_actions),
      ok_actions: strs(v.ok_actions),
      insufficient_data_actions: strs(v.insufficient_data_actions),
      // The alarm's state is live, not part of the configuration Terraform keeps.
      state_value: null,
    },
  });
  for (const d of dimensions) {
    const type = DIMENSION_TYPES[d.name];
    if (type) reg.link(alarm, 'monitors', { type, id: d.value });
  }
  // Load balancer and target group dimensions hold the tail of the ARN: app/name/hash, targetgroup/name/hash.
  reg.after(() => {
    for (const d of dimensions) {
      const suffix =
        d.name === 'LoadBalancer'
          ? `:loadbalancer/${d.value}`
          : d.name === 'TargetGroup'
            ? `:${d.value}`
            : null;
      if (!suffix) continue;
      const hit = reg.drafts.find((x) => x.arn?.endsWith(suffix));
      if (hit) reg.link(alarm, 'monitors', hit);
    }
  });
}

function mapLogGroup(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? idOf(row);
  const retention = num(v.retention_in_days);
  reg.add(row, 'aws_cloudwatch_log_group', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('logs', `log-group:${name}`),
    attributes: {
      name,
      // Terraform writes 0 for "never expire"; AWS leaves the field out.
      retention_in_days: retention ? retention : null,
      kms_key_id: str(v.kms_key_id),
      log_group_class: str(v.log_group_class),
    },
  });
}

function mapTrail(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? idOf(row);
  reg.add(row, 'aws_cloudtrail_trail', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('cloudtrail', `trail/${name}`),
    attributes: {
      name,
      home_region: str(v.home_region),
      is_multi_region_trail: bool(v.is_multi_region_trail) ?? false,
      is_organization_trail: bool(v.is_organization_trail) ?? false,
      include_global_service_events: bool(v.include_global_service_events) ?? true,
      is_logging: bool(v.enable_logging) ?? true,
      log_file_validation_enabled: bool(v.enable_log_file_validation) ?? false,
      s3_bucket_name: str(v.s3_bucket_name),
      kms_key_id: str(v.kms_key_id),
      cloud_watch_logs_log_group_arn: str(v.cloud_watch_logs_group_arn),
    },
  });
}

const dnsName = (s: string | null) =>
  (s ?? '')
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^dualstack\./, '');

function mapRoute53Record(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.fqdn) ?? str(v.name) ?? row.address;
  const type = str(v.type) ?? 'A';
  const zone = str(v.zone_id);
  const alias = block(v.alias);
  const records = strs(v.records);
  const rec = reg.add(row, 'aws_route53_record', {
    nativeId: str(v.id) ?? `${zone}_${name}_${type}`,
    naturalName: name,
    global: true,
    buildArn: arnOf('route53', `hostedzone/${zone ?? ''}/recordset/${name}/${type}`, 'bare'),
    attributes: {
      name,
      type,
      zone_id: zone,
      ttl: num(v.ttl),
      records,
      alias_target: alias && { dns_name: str(alias.name), hosted_zone_id: str(alias.zone_id) },
      set_identifier: str(v.set_identifier),
    },
  });
  // What the record resolves to: a load balancer by DNS name, an Elastic IP by address.
  reg.after(() => {
    const targets = resolvableNames(reg);
    for (const n of new Set([dnsName(str(alias?.name)), ...records.map(dnsName)])) {
      for (const d of targets.get(n) ?? []) reg.link(rec, 'resolves-to', d);
    }
  });
}

const NAME_INDEX = new WeakMap<Registry, Map<string, Draft[]>>();

/** Load balancers by DNS name and Elastic IPs by address, indexed once per import. */
function resolvableNames(reg: Registry): Map<string, Draft[]> {
  let index = NAME_INDEX.get(reg);
  if (index) return index;
  index = new Map();
  for (const d of reg.drafts) {
    const key =
      d.type === 'aws_ec2_application_load_balancer'
        ? dnsName(str(d.attributes.dns_name))
        : d.type === 'aws_vpc_eip'
          ? (str(d.attributes.public_ip) ?? '')
          : '';
    if (key) index.set(key, [...(index.get(key) ?? []), d]);
  }
  NAME_INDEX.set(reg, index);
  return index;
}

export const MONITORING_MAPPERS: Record<string, (row: TfRow, reg: Registry) => void> = {
  aws_cloudwatch_metric_alarm: mapAlarm,
  aws_cloudwatch_log_group: mapLogGroup,
  aws_cloudtrail: mapTrail,
  aws_route53_record: mapRoute53Record,
};
