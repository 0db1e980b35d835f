// Load balancers, target groups, Auto Scaling groups and launch templates.
import { arnOf, idOf, type Registry, type TfRow } from './registry';
import { block, blocks, bool, num, pos, str, strs } from './values';

function mapLoadBalancer(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? row.address;
  const type = str(v.load_balancer_type) ?? 'application';
  const subnets = [
    ...new Set([...strs(v.subnets), ...blocks(v.subnet_mapping).flatMap((m) => strs(m.subnet_id))]),
  ];
  const sgs = strs(v.security_groups);
  const attr = (key: string, value: unknown) => ({ key, value: value === null ? null : String(value) });
  const lb = reg.add(row, 'aws_ec2_application_load_balancer', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('elasticloadbalancing', `loadbalancer/${type === 'network' ? 'net' : 'app'}/${name}`),
    attributes: {
      name,
      arn: str(v.arn),
      type,
      scheme: bool(v.internal) ? 'internal' : 'internet-facing',
      vpc_id: str(v.vpc_id),
      dns_name: str(v.dns_name),
      canonical_hosted_zone_id: str(v.zone_id),
      ip_address_type: str(v.ip_address_type),
      state_code: 'active',
      security_groups: sgs,
      availability_zones: subnets.map((subnet_id) => ({ subnet_id, zone_name: null as unknown })),
      load_balancer_attributes: [
        attr('deletion_protection.enabled', bool(v.enable_deletion_protection) ?? false),
        attr('load_balancing.cross_zone.enabled', bool(v.enable_cross_zone_load_balancing)),
        attr('idle_timeout.timeout_seconds', num(v.idle_timeout)),
        attr('access_logs.s3.enabled', bool(block(v.access_logs)?.enabled) ?? false),
        attr('routing.http.drop_invalid_header_fields.enabled', bool(v.drop_invalid_header_fields)),
      ].filter((a) => a.value !== null),
      listeners: [],
    },
  });
  for (const s of subnets) reg.link(lb, 'member-of', { type: 'aws_vpc_subnet', id: s });
  for (const g of sgs) reg.link(lb, 'protected-by', { type: 'aws_vpc_security_group', id: g });
  reg.after(() => {
    for (const z of lb.attributes.availability_zones as { subnet_id: string; zone_name: unknown }[]) {
      z.zone_name = reg.get('aws_vpc_subnet', z.subnet_id)?.availabilityZone ?? null;
    }
  });
}

function mapTargetGroup(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? row.address;
  const hc = block(v.health_check) ?? {};
  const lbArns = strs(v.load_balancer_arns);
  const tg = reg.add(row, 'aws_ec2_target_group', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('elasticloadbalancing', `targetgroup/${name}`),
    attributes: {
      target_group_name: name,
      target_group_arn: str(v.arn),
      target_type: str(v.target_type) ?? 'instance',
      protocol: str(v.protocol),
      protocol_version: str(v.protocol_version),
      port: num(v.port),
      vpc_id: str(v.vpc_id),
      load_balancer_arns: lbArns,
      health_check_enabled: bool(hc.enabled),
      health_check_path: str(hc.path),
      health_check_port: str(hc.port),
      health_check_protocol: str(hc.protocol),
      health_check_interval_seconds: num(hc.interval),
      health_check_timeout_seconds: num(hc.timeout),
      healthy_threshold_count: num(hc.healthy_threshold),
      unhealthy_threshold_count: num(hc.unhealthy_threshold),
      // Registered targets and their health are live facts a state does not hold (attachments aside).
      target_health_descriptions: [],
    },
  });
  for (const arn of lbArns) reg.link({ arn }, 'routes-to', tg);
  reg.link(tg, 'member-of', { type: 'aws_vpc', id: str(v.vpc_id) ?? '' });
  reg.placeBy(tg, { type: 'aws_vpc', id: str(v.vpc_id) ?? '' }, false);
}

function mapAutoscalingGroup(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? str(v.id) ?? row.address;
  const subnets = strs(v.vpc_zone_identifier);
  const lt =
    block(v.launch_template) ??
    block(block(block(v.mixed_instances_policy)?.launch_template)?.launch_template_specification);
  const tags: Record<string, string> = {};
  for (const t of blocks(v.tag)) if (str(t.key)) tags[str(t.key)!] = str(t.value) ?? '';
  const tgArns = strs(v.target_group_arns);
  const asg = reg.add(row, 'aws_ec2_autoscaling_group', {
    nativeId: name,
    naturalName: name,
    tags,
    buildArn: arnOf('autoscaling', `autoScalingGroup:*:autoScalingGroupName/${name}`),
    attributes: {
      name,
      autoscaling_group_arn: str(v.arn),
      min_size: num(v.min_size),
      max_size: num(v.max_size),
      desired_capacity: num(v.desired_capacity),
      default_cooldown: num(v.default_cooldown),
      availability_zones: strs(v.availability_zones).sort(),
      // AWS's VPCZoneIdentifier is one comma-separated string.
      vpc_zone_identifier: subnets.join(','),
      health_check_type: str(v.health_check_type) ?? 'EC2',
      health_check_grace_period: num(v.health_check_grace_period),
      target_group_arns: tgArns,
      load_balancer_names: strs(v.load_balancers),
      launch_configuration_name: str(v.launch_configuration),
      launch_template: lt && {
        launch_template_id: str(lt.id) ?? str(lt.launch_template_id),
        launch_template_name: str(lt.name) ?? str(lt.launch_template_name),
        version: str(lt.version),
      },
      capacity_rebalance: bool(v.capacity_rebalance) ?? false,
      // Instances come and go outside Terraform; the state does not list them.
      instances: [],
    },
  });
  for (const s of subnets) {
    reg.link(asg, 'member-of', { type: 'aws_vpc_subnet', id: s });
    reg.placeBy(asg, { type: 'aws_vpc_subnet', id: s }, false);
  }
  for (const arn of tgArns) reg.link({ arn }, 'targets', asg);
  reg.after(() => {
    const a = asg.attributes;
    if ((a.availability_zones as string[]).length) return;
    const zones = subnets.map((s) => reg.get('aws_vpc_subnet', s)?.availabilityZone).filter((z) => !!z);
    a.availability_zones = [...new Set(zones)].sort();
  });
}

function mapLaunchTemplate(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const meta = block(v.metadata_options);
  reg.add(row, 'aws_ec2_launch_template', {
    nativeId: id,
    naturalName: str(v.name),
    buildArn: arnOf('ec2', `launch-template/${id}`),
    attributes: {
      launch_template_id: id,
      launch_template_name: str(v.name),
      default_version_number: num(v.default_version),
      latest_version_number: num(v.latest_version),
      image_id: str(v.image_id),
      instance_type: str(v.instance_type),
      key_name: str(v.key_name),
      ebs_optimized: bool(v.ebs_optimized),
      iam_instance_profile:
        str(block(v.iam_instance_profile)?.name) ?? str(block(v.iam_instance_profile)?.arn),
      vpc_security_group_ids: strs(v.vpc_security_group_ids),
      metadata_options: meta && {
        http_tokens: str(meta.http_tokens),
        http_endpoint: str(meta.http_endpoint),
        http_put_response_hop_limit: num(meta.http_put_response_hop_limit),
      },
      block_device_mappings: blocks(v.block_device_mappings).map((m) => {
        const ebs = block(m.ebs) ?? {};
        return {
          device_name: str(m.device_name),
          ebs: {
            volume_type: str(ebs.volume_type),
            volume_size: num(ebs.volume_size),
            iops: pos(ebs.iops),
            throughput: pos(ebs.throughput),
            encrypted: bool(ebs.encrypted),
            delete_on_termination: bool(ebs.delete_on_termination),
          },
        };
      }),
    },
  });
}

export const LOAD_BALANCING_MAPPERS: Record<string, (row: TfRow, reg: Registry) => void> = {
  aws_lb: mapLoadBalancer,
  aws_alb: mapLoadBalancer,
  aws_lb_target_group: mapTargetGroup,
  aws_alb_target_group: mapTargetGroup,
  aws_autoscaling_group: mapAutoscalingGroup,
  aws_launch_template: mapLaunchTemplate,
};
