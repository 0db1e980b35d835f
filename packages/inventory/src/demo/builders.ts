import type { InventoryResource } from '../model';
import { hexId } from './random';
import type { WorldBuilder } from './world';

// Builders for resources the seeded organization, the filler stacks, the timeline and commands share.

export function eip(
  w: WorldBuilder,
  account: string,
  region: string,
  key: string,
  day: number,
  tags: Record<string, string>,
) {
  const id = w.id('eipalloc', key);
  const seed = w.spec.seed;
  return w.add({
    type: 'aws_vpc_eip',
    nativeId: id,
    arn: w.ec2Arn(account, region, 'elastic-ip', id),
    account,
    region,
    tags,
    attributes: {
      allocation_id: id,
      public_ip: `3.${(parseInt(hexId(seed, `${key}:a`, 2), 16) % 250) + 2}.${(parseInt(hexId(seed, `${key}:b`, 2), 16) % 250) + 2}.${(parseInt(hexId(seed, `${key}:c`, 2), 16) % 250) + 2}`,
      association_id: null,
      instance_id: null,
      network_interface_id: null,
      domain: 'vpc',
      allocation_time: w.iso(day, 10, 0),
    },
  });
}

export function natGateway(
  w: WorldBuilder,
  subnet: InventoryResource,
  key: string,
  address: InventoryResource,
  day: number,
  tags: Record<string, string>,
) {
  const id = w.id('nat', key);
  const nat = w.add({
    type: 'aws_vpc_nat_gateway',
    nativeId: id,
    arn: w.ec2Arn(subnet.accountId, subnet.region, 'natgateway', id),
    account: subnet.accountId,
    region: subnet.region,
    az: String(subnet.attributes.availability_zone),
    tags,
    attributes: {
      nat_gateway_id: id,
      subnet_id: subnet.nativeId,
      vpc_id: subnet.attributes.vpc_id,
      state: 'available',
      connectivity_type: 'public',
      create_time: w.iso(day, 12, 0),
      nat_gateway_addresses: [{ allocation_id: address.nativeId, public_ip: address.attributes.public_ip }],
    },
  });
  w.link(nat.arn, subnet.arn, 'member-of');
  w.link(address.arn, nat.arn, 'attached-to');
  return nat;
}

export function routeTable(
  w: WorldBuilder,
  vpc: InventoryResource,
  key: string,
  subnets: InventoryResource[],
  defaultRoute: { gateway_id?: string; nat_gateway_id?: string },
  target: InventoryResource,
  tags: Record<string, string>,
) {
  const id = w.id('rtb', key);
  const rt = w.add({
    type: 'aws_vpc_route_table',
    nativeId: id,
    arn: w.ec2Arn(vpc.accountId, vpc.region, 'route-table', id),
    account: vpc.accountId,
    region: vpc.region,
    tags,
    attributes: {
      route_table_id: id,
      vpc_id: vpc.nativeId,
      routes: [
        { destination_cidr_block: String(vpc.attributes.cidr_block), gateway_id: 'local', state: 'active' },
        { destination_cidr_block: '0.0.0.0/0', ...defaultRoute, state: 'active' },
      ],
      associations: subnets.map((s) => ({
        subnet_id: s.nativeId,
        main: false,
        route_table_association_id: `rtbassoc-${hexId(w.spec.seed, `${key}:${s.nativeId}`, 17)}`,
      })),
    },
  });
  w.link(rt.arn, target.arn, 'routes-to');
  for (const s of subnets) {
    s.attributes.route_table_id = id;
    w.link(s.arn, rt.arn, 'depends-on');
  }
  return rt;
}

export function role(
  w: WorldBuilder,
  account: string,
  name: string,
  statements: Array<Record<string, unknown>>,
) {
  const r = w.add({
    type: 'aws_iam_role',
    nativeId: name,
    arn: `arn:aws:iam::${account}:role/${name}`,
    account,
    region: 'global',
    name,
    attributes: {
      name,
      role_id: `AROA${hexId(w.spec.seed, `role:${account}:${name}`, 16).toUpperCase()}`,
      assume_role_policy: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      },
      attached_policy_arns: [],
      inline_policies: [
        { policy_name: `${name}-policy`, policy: { Version: '2012-10-17', Statement: statements } },
      ],
      create_date: w.iso(-400),
    },
  });
  w.add({
    type: 'aws_iam_instance_profile',
    nativeId: name,
    arn: `arn:aws:iam::${account}:instance-profile/${name}`,
    account,
    region: 'global',
    name,
    attributes: { instance_profile_name: name, roles: [r.arn] },
  });
  w.link(`arn:aws:iam::${account}:instance-profile/${name}`, r.arn, 'uses-role');
  return r;
}

export function launchTemplate(
  w: WorldBuilder,
  account: string,
  region: string,
  name: string,
  instanceType: string,
  volumeType: string,
  volumeSize: number,
) {
  const id = w.id('lt', `${account}:${region}:${name}`);
  return w.add({
    type: 'aws_ec2_launch_template',
    nativeId: id,
    arn: w.ec2Arn(account, region, 'launch-template', id),
    account,
    region,
    name,
    tags: { Name: name },
    attributes: {
      launch_template_id: id,
      launch_template_name: name,
      latest_version_number: 3,
      default_version: {
        instance_type: instanceType,
        block_device_mappings: [
          {
            device_name: '/dev/xvda',
            ebs: { volume_type: volumeType, volume_size: volumeSize, encrypted: true },
          },
        ],
        metadata_options: { http_tokens: 'required' },
      },
    },
  });
}

export function loadBalancer(
  w: WorldBuilder,
  account: string,
  region: string,
  name: string,
  subnets: InventoryResource[],
  sgs: InventoryResource[],
  targets: InventoryResource[] | null,
  tags: Record<string, string>,
  deletionProtection: boolean,
) {
  const suffix = hexId(w.spec.seed, `alb:${account}:${region}:${name}`, 16);
  const arn = `arn:aws:elasticloadbalancing:${region}:${account}:loadbalancer/app/${name}/${suffix}`;
  const alb = w.add({
    type: 'aws_ec2_application_load_balancer',
    nativeId: `app/${name}/${suffix}`,
    arn,
    account,
    region,
    name,
    tags: { Name: name, ...tags },
    attributes: {
      arn,
      name,
      type: 'application',
      scheme: 'internet-facing',
      state: 'active',
      dns_name: `${name}-${parseInt(suffix.slice(0, 8), 16)}.${region}.elb.amazonaws.com`,
      vpc_id: subnets[0]!.attributes.vpc_id,
      availability_zones: subnets.map((s) => ({
        zone_name: s.attributes.availability_zone,
        subnet_id: s.nativeId,
      })),
      security_groups: sgs.map((sg) => sg.nativeId),
      load_balancer_attributes: { deletion_protection_enabled: deletionProtection, cross_zone_enabled: true },
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificate_arn: `arn:aws:acm:${region}:${account}:certificate/${hexId(w.spec.seed, `cert:${name}`, 8)}-${hexId(w.spec.seed, `cert2:${name}`, 4)}`,
        },
      ],
      target_group_arns: [] as string[],
    },
  });
  for (const sg of sgs) w.link(alb.arn, sg.arn, 'protected-by');
  let tg: InventoryResource | null = null;
  if (targets) {
    const tgSuffix = hexId(w.spec.seed, `tg:${account}:${region}:${name}`, 16);
    const tgName = `${name.replace(/-alb$/, '')}-tg`;
    const tgArn = `arn:aws:elasticloadbalancing:${region}:${account}:targetgroup/${tgName}/${tgSuffix}`;
    tg = w.add({
      type: 'aws_ec2_target_group',
      nativeId: `targetgroup/${tgName}/${tgSuffix}`,
      arn: tgArn,
      account,
      region,
      name: tgName,
      tags,
      attributes: {
        target_group_arn: tgArn,
        target_group_name: tgName,
        protocol: 'HTTP',
        port: 8080,
        vpc_id: subnets[0]!.attributes.vpc_id,
        load_balancer_arns: [arn],
        health_check_path: '/healthz',
        target_health_descriptions: targets.map((t) => ({
          target: { id: t.nativeId, port: 8080 },
          target_health: { state: 'healthy' },
        })),
      },
    });
    (alb.attributes.target_group_arns as string[]).push(tgArn);
    w.link(alb.arn, tg.arn, 'routes-to');
    for (const t of targets) w.link(tg.arn, t.arn, 'targets');
  }
  return { alb, tg: tg! };
}

export function autoScalingGroup(
  w: WorldBuilder,
  account: string,
  region: string,
  name: string,
  subnets: InventoryResource[],
  instances: InventoryResource[],
  min: number,
  max: number,
  desired: number,
  lt: InventoryResource | null,
  tgs: InventoryResource[],
  tags: Record<string, string>,
) {
  const uuid = hexId(w.spec.seed, `asg:${account}:${region}:${name}`, 32).replace(
    /^(.{8})(.{4})(.{4})(.{4})(.{12})$/,
    '$1-$2-$3-$4-$5',
  );
  const asg = w.add({
    type: 'aws_ec2_autoscaling_group',
    nativeId: name,
    arn: `arn:aws:autoscaling:${region}:${account}:autoScalingGroup:${uuid}:autoScalingGroupName/${name}`,
    account,
    region,
    name,
    tags: { Name: name, ...tags },
    attributes: {
      auto_scaling_group_name: name,
      min_size: min,
      max_size: max,
      desired_capacity: desired,
      availability_zones: [...new Set(subnets.map((s) => String(s.attributes.availability_zone)))],
      vpc_zone_identifier: subnets.map((s) => s.nativeId).join(','),
      target_group_arns: tgs.map((t) => t.arn),
      health_check_type: tgs.length ? 'ELB' : 'EC2',
      launch_template: lt
        ? { launch_template_id: lt.nativeId, launch_template_name: lt.name, version: '$Latest' }
        : null,
      instances: instances.map((i) => ({
        instance_id: i.nativeId,
        availability_zone: i.availabilityZone,
        lifecycle_state: 'InService',
        health_status: 'Healthy',
      })),
    },
  });
  for (const i of instances) w.link(asg.arn, i.arn, 'contains');
  for (const tg of tgs) w.link(asg.arn, tg.arn, 'member-of');
  return asg;
}

export function rds(
  w: WorldBuilder,
  account: string,
  region: string,
  id: string,
  o: {
    class: string;
    multi_az: boolean;
    backup_retention_period: number;
    deletion_protection: boolean;
    publicly_accessible: boolean;
    storage_encrypted: boolean;
    allocated_storage: number;
    az: string;
    sgs: InventoryResource[];
    subnetGroup: string;
    tags: Record<string, string>;
    createDay: number;
  },
) {
  const secondAz = o.multi_az ? `${region}${o.az.endsWith('a') ? 'b' : 'a'}` : null;
  const db = w.add({
    type: 'aws_rds_db_instance',
    nativeId: id,
    arn: `arn:aws:rds:${region}:${account}:db:${id}`,
    account,
    region,
    az: o.az,
    name: id,
    tags: o.tags,
    size: [o.allocated_storage, 'GiB'],
    attributes: {
      db_instance_identifier: id,
      class: o.class,
      engine: 'mysql',
      engine_version: '8.0.39',
      status: 'available',
      multi_az: o.multi_az,
      backup_retention_period: o.backup_retention_period,
      deletion_protection: o.deletion_protection,
      publicly_accessible: o.publicly_accessible,
      storage_encrypted: o.storage_encrypted,
      kms_key_id: o.storage_encrypted ? `arn:aws:kms:${region}:${account}:alias/aws/rds` : null,
      storage_type: 'gp2',
      allocated_storage: o.allocated_storage,
      iops: null,
      availability_zone: o.az,
      secondary_availability_zone: secondAz,
      db_subnet_group_name: o.subnetGroup,
      vpc_security_groups: o.sgs.map((sg) => ({ vpc_security_group_id: sg.nativeId, status: 'active' })),
      read_replica_source_db_instance_identifier: null,
      create_time: w.iso(o.createDay, 8, 30),
      auto_minor_version_upgrade: true,
      endpoint: {
        address: `${id}.${hexId(w.spec.seed, `rds:${id}`, 12)}.${region}.rds.amazonaws.com`,
        port: 3306,
      },
    },
  });
  for (const sg of o.sgs) w.link(db.arn, sg.arn, 'protected-by');
  return db;
}

export function rdsSnapshot(
  w: WorldBuilder,
  account: string,
  region: string,
  id: string,
  sourceDb: string,
  gb: number,
  day: number,
) {
  return w.add({
    type: 'aws_rds_db_snapshot',
    nativeId: id,
    arn: `arn:aws:rds:${region}:${account}:snapshot:${id}`,
    account,
    region,
    name: id,
    size: [gb, 'GiB'],
    attributes: {
      db_snapshot_identifier: id,
      db_instance_identifier: sourceDb,
      snapshot_create_time: w.iso(day, 4, 0),
      allocated_storage: gb,
      status: 'available',
      encrypted: true,
      snapshot_type: 'manual',
    },
  });
}

export function bucket(
  w: WorldBuilder,
  account: string,
  region: string,
  name: string,
  o: {
    publicAcl: boolean;
    blockAll: boolean;
    policy: Record<string, unknown> | null;
    tags: Record<string, string>;
    sizeGb: number;
    lifecycle?: boolean;
  },
) {
  const owner = hexId(w.spec.seed, `canonical:${account}`, 64);
  return w.add({
    type: 'aws_s3_bucket',
    nativeId: name,
    arn: `arn:aws:s3:::${name}`,
    account,
    region,
    name,
    tags: o.tags,
    size: [o.sizeGb, 'GiB'],
    attributes: {
      name,
      region,
      creation_date: w.iso(-700),
      block_public_acls: o.blockAll,
      block_public_policy: o.blockAll,
      ignore_public_acls: o.blockAll,
      restrict_public_buckets: o.blockAll,
      bucket_policy_is_public: o.policy !== null,
      policy_std: o.policy,
      acl: {
        owner: { id: owner },
        grants: [
          { grantee: { type: 'CanonicalUser', id: owner }, permission: 'FULL_CONTROL' },
          ...(o.publicAcl
            ? [
                {
                  grantee: { type: 'Group', uri: 'http://acs.amazonaws.com/groups/global/AllUsers' },
                  permission: 'READ',
                },
              ]
            : []),
        ],
      },
      server_side_encryption_configuration: {
        rules: [{ apply_server_side_encryption_by_default: { sse_algorithm: 'AES256' } }],
      },
      versioning_enabled: o.blockAll,
      lifecycle_rules: o.lifecycle
        ? [{ id: 'archive', status: 'Enabled', transitions: [{ days: 90, storage_class: 'GLACIER' }] }]
        : [],
      logging: null,
      size_bytes: o.sizeGb * 1024 ** 3,
    },
  });
}

export function route53(w: WorldBuilder, account: string, name: string, target: InventoryResource) {
  const zone = `Z${hexId(w.spec.seed, `zone:${name}`, 12).toUpperCase()}`;
  const r = w.add({
    type: 'aws_route53_record',
    nativeId: `${zone}/${name}/A`,
    arn: `arn:aws:route53:::hostedzone/${zone}/recordset/${name}/A`,
    account,
    region: 'global',
    name,
    attributes: {
      name,
      type: 'A',
      zone_id: zone,
      alias_target: { dns_name: target.attributes.dns_name, evaluate_target_health: true },
      records: [],
    },
  });
  w.link(r.arn, target.arn, 'resolves-to');
  return r;
}
