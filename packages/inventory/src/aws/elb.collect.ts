import {
  DescribeLoadBalancerAttributesCommand,
  DescribeTagsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  paginateDescribeListeners,
  paginateDescribeLoadBalancers,
  paginateDescribeTargetGroups,
  type LoadBalancer,
  type TargetGroup,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { readOrNull, type CollectContext } from './collect-context';
import { chunk, iso, mapBounded, orNull, snake, snakeList, tagRecord } from './shape';

/**
 * ELBv2 load balancers with their attributes and listeners, and target groups with target health.
 * Network and gateway load balancers are kept too, under the same type with `type` saying which.
 * The listings stand on their own; a detail call denied (tags, one load balancer's attributes or
 * listeners, one target group's health) leaves that detail unknown (null, named in `unreadable`).
 */
export async function collectElb(ctx: CollectContext): Promise<void> {
  const client = ctx.client(ElasticLoadBalancingV2Client);
  const [lbs, tgs] = await Promise.all([
    ctx.part(['aws_ec2_application_load_balancer'], () => listLoadBalancers(ctx, client)),
    ctx.part(['aws_ec2_target_group'], () => listTargetGroups(ctx, client)),
  ]).then(([l, t]) => [l ?? [], t ?? []] as const);
  const tags = await tagsOf(ctx, client, [
    ...lbs.map((l) => l.LoadBalancerArn),
    ...tgs.map((t) => t.TargetGroupArn),
  ]);
  await Promise.all([
    mapBounded(lbs, ctx.width, (lb) => addLoadBalancer(ctx, client, lb, tags)),
    mapBounded(tgs, ctx.width, (tg) => addTargetGroup(ctx, client, tg, tags)),
  ]);
}

async function listLoadBalancers(ctx: CollectContext, client: ElasticLoadBalancingV2Client) {
  const out: LoadBalancer[] = [];
  for await (const page of paginateDescribeLoadBalancers({ client, pageSize: 400 }, {}, ctx.send)) {
    for (const lb of page.LoadBalancers ?? []) if (lb.LoadBalancerArn) out.push(lb);
  }
  return out;
}

async function listTargetGroups(ctx: CollectContext, client: ElasticLoadBalancingV2Client) {
  const out: TargetGroup[] = [];
  for await (const page of paginateDescribeTargetGroups({ client, pageSize: 400 }, {}, ctx.send)) {
    for (const tg of page.TargetGroups ?? []) if (tg.TargetGroupArn) out.push(tg);
  }
  return out;
}

/** DescribeTags takes at most 20 ARNs a call; an ARN of a denied batch maps to null (tags unknown). */
async function tagsOf(
  ctx: CollectContext,
  client: ElasticLoadBalancingV2Client,
  arns: (string | undefined)[],
) {
  const tags = new Map<string, Record<string, string> | null>();
  const batches = chunk(
    arns.filter((a): a is string => !!a),
    20,
  );
  await mapBounded(batches, ctx.width, async (ResourceArns) => {
    const res = await readOrNull(
      'DescribeTags',
      [],
      client.send(new DescribeTagsCommand({ ResourceArns }), ctx.send),
    );
    if (!res) for (const arn of ResourceArns) tags.set(arn, null);
    for (const d of res?.TagDescriptions ?? []) if (d.ResourceArn) tags.set(d.ResourceArn, tagRecord(d.Tags));
  });
  return tags;
}

async function addLoadBalancer(
  ctx: CollectContext,
  client: ElasticLoadBalancingV2Client,
  lb: LoadBalancer,
  tags: Map<string, Record<string, string> | null>,
) {
  const { out, region } = ctx;
  const arn = lb.LoadBalancerArn as string;
  const unreadable: string[] = [];
  const [attrs, listeners] = await Promise.all([
    readOrNull(
      'DescribeLoadBalancerAttributes',
      unreadable,
      client.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: arn }), ctx.send),
    ),
    readOrNull(
      'DescribeListeners',
      unreadable,
      (async () => {
        const all = [];
        for await (const page of paginateDescribeListeners(
          { client, pageSize: 400 },
          { LoadBalancerArn: arn },
          ctx.send,
        ))
          all.push(...(page.Listeners ?? []));
        return all;
      })(),
    ),
  ]);
  let attributes: Record<string, string | null> | null = null;
  if (attrs) {
    attributes = {};
    for (const a of attrs.Attributes ?? []) if (a.Key) attributes[a.Key] = orNull(a.Value);
  }
  const known = tags.get(arn);
  if (known === null) unreadable.push('DescribeTags');
  const lbTags = known ?? {};
  out.add({
    type: 'aws_ec2_application_load_balancer',
    arn,
    nativeId: orNull(lb.LoadBalancerName) ?? arn,
    region,
    name: lbTags.Name ?? orNull(lb.LoadBalancerName),
    tags: lbTags,
    attributes: {
      arn,
      name: orNull(lb.LoadBalancerName),
      type: orNull(lb.Type),
      scheme: orNull(lb.Scheme),
      state: orNull(lb.State?.Code),
      dns_name: orNull(lb.DNSName),
      canonical_hosted_zone_id: orNull(lb.CanonicalHostedZoneId),
      vpc_id: orNull(lb.VpcId),
      ip_address_type: orNull(lb.IpAddressType),
      availability_zones: snakeList(lb.AvailabilityZones),
      security_groups: lb.SecurityGroups ?? [],
      created_time: iso(lb.CreatedTime),
      // {"deletion_protection.enabled": "true", ...}: AWS's keys and string values.
      load_balancer_attributes: attributes,
      listeners: listeners
        ? listeners.map((l) => ({
            listener_arn: orNull(l.ListenerArn),
            port: orNull(l.Port),
            protocol: orNull(l.Protocol),
            ssl_policy: orNull(l.SslPolicy),
            certificates: (l.Certificates ?? []).map((c) => c.CertificateArn ?? null),
            default_actions: snakeList(l.DefaultActions),
          }))
        : null,
      unreadable: unreadable.sort(),
    },
  });
  for (const g of lb.SecurityGroups ?? [])
    out.link(arn, out.ec2Arn(region, 'security-group', g), 'protected-by');
  for (const z of lb.AvailabilityZones ?? [])
    out.link(arn, out.ec2Arn(region, 'subnet', z.SubnetId), 'member-of');
}

async function addTargetGroup(
  ctx: CollectContext,
  client: ElasticLoadBalancingV2Client,
  tg: TargetGroup,
  tags: Map<string, Record<string, string> | null>,
) {
  const { out, region } = ctx;
  const arn = tg.TargetGroupArn as string;
  const unreadable: string[] = [];
  // DescribeTargetHealth is not paginated: one call returns every registered target. Denied, the
  // targets are unknown (null): not "no targets", which would read as an idle load balancer.
  const health = await readOrNull(
    'DescribeTargetHealth',
    unreadable,
    client.send(new DescribeTargetHealthCommand({ TargetGroupArn: arn }), ctx.send),
  );
  const known = tags.get(arn);
  if (known === null) unreadable.push('DescribeTags');
  const tgTags = known ?? {};
  out.add({
    type: 'aws_ec2_target_group',
    arn,
    nativeId: orNull(tg.TargetGroupName) ?? arn,
    region,
    name: tgTags.Name ?? orNull(tg.TargetGroupName),
    tags: tgTags,
    attributes: {
      target_group_arn: arn,
      target_group_name: orNull(tg.TargetGroupName),
      target_type: orNull(tg.TargetType),
      protocol: orNull(tg.Protocol),
      protocol_version: orNull(tg.ProtocolVersion),
      port: orNull(tg.Port),
      vpc_id: orNull(tg.VpcId),
      ip_address_type: orNull(tg.IpAddressType),
      load_balancer_arns: tg.LoadBalancerArns ?? [],
      health_check_enabled: orNull(tg.HealthCheckEnabled),
      health_check_protocol: orNull(tg.HealthCheckProtocol),
      health_check_port: orNull(tg.HealthCheckPort),
      health_check_path: orNull(tg.HealthCheckPath),
      health_check_interval_seconds: orNull(tg.HealthCheckIntervalSeconds),
      health_check_timeout_seconds: orNull(tg.HealthCheckTimeoutSeconds),
      healthy_threshold_count: orNull(tg.HealthyThresholdCount),
      unhealthy_threshold_count: orNull(tg.UnhealthyThresholdCount),
      matcher: snake(tg.Matcher),
      target_health_descriptions: health ? snakeList(health.TargetHealthDescriptions) : null,
      unreadable: unreadable.sort(),
    },
  });
  for (const lb of tg.LoadBalancerArns ?? []) out.link(lb, arn, 'routes-to');
  if (tg.TargetType === 'instance') {
    for (const d of health?.TargetHealthDescriptions ?? [])
      out.link(arn, out.ec2Arn(region, 'instance', d.Target?.Id), 'targets');
  }
}
