import type { InventoryResource } from '../model';
import type { InventoryBuilder } from './inventory-builder';

/**
 * Edges and fields that need resources of several services or regions, run once everything is
 * collected: instance → role through its instance profile, subnet → route table (explicit or the
 * VPC's main one), NAT gateway zones, and alarm → resource from the alarm's dimensions.
 */
export function linkAcrossServices(out: InventoryBuilder): void {
  linkInstanceRoles(out);
  linkSubnetRouteTables(out);
  zoneNatGateways(out);
  linkAlarms(out);
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const list = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? (v as Record<string, unknown>[]) : [];

function linkInstanceRoles(out: InventoryBuilder) {
  for (const i of out.ofType('aws_ec2_instance')) {
    const profile = out.get(str(i.attributes.iam_instance_profile_arn) ?? '');
    if (!profile) continue;
    for (const role of list(profile.attributes.roles)) out.link(i.arn, str(role.arn), 'uses-role');
  }
}

/** A subnet without an explicit association uses its VPC's main route table (DescribeRouteTables does not list it). */
function linkSubnetRouteTables(out: InventoryBuilder) {
  const explicit = new Map<string, InventoryResource>();
  const main = new Map<string, InventoryResource>();
  for (const t of out.ofType('aws_vpc_route_table')) {
    for (const a of list(t.attributes.associations)) {
      const subnet = str(a.subnet_id);
      if (subnet) explicit.set(`${t.region}|${subnet}`, t);
      if (a.main === true) main.set(`${t.region}|${str(t.attributes.vpc_id)}`, t);
    }
  }
  for (const s of out.ofType('aws_vpc_subnet')) {
    const own = explicit.get(`${s.region}|${s.nativeId}`);
    const table = own ?? main.get(`${s.region}|${str(s.attributes.vpc_id)}`);
    if (!table) continue;
    s.attributes.route_table_id = table.nativeId;
    s.attributes.route_table_is_main = !own;
    out.link(s.arn, table.arn, 'depends-on');
  }
}

function zoneNatGateways(out: InventoryBuilder) {
  for (const n of out.ofType('aws_vpc_nat_gateway')) {
    const subnet = out.get(out.arnOf('aws_vpc_subnet', n.region, str(n.attributes.subnet_id)) ?? '');
    if (!subnet?.availabilityZone) continue;
    n.availabilityZone = subnet.availabilityZone;
    n.attributes.availability_zone = subnet.availabilityZone;
  }
}

/** CloudWatch dimension name → the resource it names, in the alarm's region. */
function dimensionTarget(
  out: InventoryBuilder,
  region: string,
  name: string,
  value: string,
): string | null | undefined {
  switch (name) {
    case 'InstanceId':
      return out.ec2Arn(region, 'instance', value);
    case 'VolumeId':
      return out.ec2Arn(region, 'volume', value);
    case 'NatGatewayId':
      return out.ec2Arn(region, 'natgateway', value);
    case 'DBInstanceIdentifier':
      return out.arnOf('aws_rds_db_instance', region, value);
    case 'LoadBalancer': // app/<name>/<id>
      return out.elbArn(region, `loadbalancer/${value}`);
    case 'TargetGroup': // targetgroup/<name>/<id>
      return out.elbArn(region, value);
    case 'AutoScalingGroupName':
      return out.arnOf('aws_ec2_autoscaling_group', region, value);
    case 'TableName':
      return out.arnOf('aws_dynamodb_table', region, value);
    case 'ReplicationGroupId':
      return out.arnOf('aws_elasticache_replication_group', region, value);
    case 'CacheClusterId':
      return out.ofType('aws_elasticache_replication_group').find((g) => {
        const members = g.attributes.member_clusters;
        return g.region === region && Array.isArray(members) && members.includes(value);
      })?.arn;
    case 'BucketName':
      return out.s3Arn(value);
    case 'LogGroupName':
      return out.arnOf('aws_cloudwatch_log_group', region, value);
    default:
      return null;
  }
}

function linkAlarms(out: InventoryBuilder) {
  for (const a of out.ofType('aws_cloudwatch_alarm')) {
    // Metric-math alarms name their resources inside each metric query rather than at the top.
    const nested = list(a.attributes.metrics).flatMap((m) => {
      const metric = (m.metric_stat as { metric?: { dimensions?: unknown } } | null)?.metric;
      return list(metric?.dimensions);
    });
    for (const d of [...list(a.attributes.dimensions), ...nested]) {
      const name = str(d.name);
      const value = str(d.value);
      if (name && value) out.link(a.arn, dimensionTarget(out, a.region, name, value), 'monitors');
    }
  }
}
