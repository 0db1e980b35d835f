import type { InventoryResource } from '../model';
import { hexId, Random } from './random';
import {
  autoScalingGroup,
  bucket,
  eip,
  launchTemplate,
  loadBalancer,
  natGateway,
  rds,
  routeTable,
} from './builders';
import { FILLER_SERVICES, type DemoSize, type WorldBuilder } from './world';

/** One clean application stack; the timeline's churn replaces its instances. */
export interface FillerService {
  key: string;
  name: string;
  asg: InventoryResource;
  tg: InventoryResource;
  subnets: InventoryResource[];
  appSg: InventoryResource;
  instanceType: string;
  instances: InventoryResource[];
  tags: Record<string, string>;
}

interface Place {
  account: 'prod' | 'staging' | 'shared';
  region: string;
  azs: readonly [string, string, string];
  octet: number;
}

const PLACES: readonly Place[] = [
  { account: 'prod', region: 'us-east-1', azs: ['us-east-1a', 'us-east-1b', 'us-east-1c'], octet: 100 },
  { account: 'staging', region: 'us-east-1', azs: ['us-east-1a', 'us-east-1b', 'us-east-1c'], octet: 120 },
  { account: 'shared', region: 'us-east-1', azs: ['us-east-1a', 'us-east-1b', 'us-east-1c'], octet: 140 },
  { account: 'prod', region: 'us-west-2', azs: ['us-west-2a', 'us-west-2b', 'us-west-2c'], octet: 160 },
];

/**
 * The whale (`xlarge`): every account in both priced regions, each with several application VPCs of
 * about 1,800 stacks, as many as one network of `large` holds, so a subnet's or a NAT gateway's blast
 * radius stays the size it is in `large` while the estate is ten times larger.
 */
const XLARGE_PLACES: readonly Place[] = [
  ...PLACES,
  { account: 'staging', region: 'us-west-2', azs: ['us-west-2a', 'us-west-2b', 'us-west-2c'], octet: 180 },
  { account: 'shared', region: 'us-west-2', azs: ['us-west-2a', 'us-west-2b', 'us-west-2c'], octet: 200 },
];
const XLARGE_VPCS_PER_PLACE = 6;

/** The application networks of a size: (place, VPC number) pairs, in the order stacks are dealt to them. */
export function fillerNetworks(size: DemoSize): Array<{ place: Place; vpc: number }> {
  if (size !== 'xlarge') return PLACES.map((place) => ({ place, vpc: 0 }));
  return XLARGE_PLACES.flatMap((place) =>
    Array.from({ length: XLARGE_VPCS_PER_PLACE }, (_, vpc) => ({ place, vpc })),
  );
}

const WORDS = [
  'orders',
  'search',
  'catalog',
  'pricing',
  'profile',
  'ledger',
  'notify',
  'media',
  'auth',
  'quote',
  'inventory',
  'shipping',
  'rates',
  'reviews',
  'cart',
  'billing',
];
const TYPES = ['m5.large', 't3.medium', 't3.large'] as const;

/**
 * Clean stacks that make the environment the right size (with `only`, just the stacks numbered from
 * `from` to before `to`; the others are left undefined, for a world built in parts): each is an ALB, a target group, a multi-AZ
 * ASG of current-generation instances with encrypted gp3 roots and IMDSv2, alarms that notify, log
 * retention, and now and then a Multi-AZ database, a DynamoDB table with PITR or a private bucket.
 * Every network has a NAT gateway per AZ. None of it should trip a detector.
 */
export function buildFiller(
  w: WorldBuilder,
  only?: { from: number; to: number },
): Array<FillerService | undefined> {
  const count = FILLER_SERVICES[w.spec.size];
  const services: Array<FillerService | undefined> = [];
  const networks = fillerNetworks(w.spec.size).map(({ place: p, vpc: v }) => {
    const account = w.accounts[p.account];
    // The first VPC of a place keeps the keys and names every smaller size has.
    const at = v === 0 ? `${p.account}:${p.region}` : `${p.account}:${p.region}:vpc${v + 1}`;
    const tags = {
      env: p.account === 'prod' ? 'prod' : p.account,
      Name: v === 0 ? `${p.account}-apps-${p.region}` : `${p.account}-apps-${p.region}-${v + 1}`,
    };
    const octet = p.octet + v;
    const vpc = w.vpc(account, p.region, `filler:${at}:vpc`, `10.${octet}.0.0/16`, tags);
    const pub = p.azs.map((az, i) =>
      w.subnet(vpc, `filler:${at}:pub:${az}`, az, `10.${octet}.${i}.0/24`, true, {
        ...tags,
        Name: `${tags.Name}-public-${az.slice(-1)}`,
      }),
    );
    const priv = p.azs.map((az, i) =>
      w.subnet(vpc, `filler:${at}:priv:${az}`, az, `10.${octet}.${32 + i * 32}.0/19`, false, {
        ...tags,
        Name: `${tags.Name}-private-${az.slice(-1)}`,
      }),
    );
    const igwId = w.id('igw', `filler:${at}:igw`);
    const igw = w.add({
      type: 'aws_vpc_internet_gateway',
      nativeId: igwId,
      arn: w.ec2Arn(account, p.region, 'internet-gateway', igwId),
      account,
      region: p.region,
      tags,
      attributes: { internet_gateway_id: igwId, attachments: [{ vpc_id: vpc.nativeId, state: 'available' }] },
    });
    routeTable(w, vpc, `filler:${at}:rt-pub`, pub, { gateway_id: igwId }, igw, {
      ...tags,
      Name: `${tags.Name}-public`,
    });
    p.azs.forEach((az, i) => {
      const addr = eip(w, account, p.region, `filler:${at}:nat-eip:${az}`, -500, tags);
      const nat = natGateway(w, pub[i]!, `filler:${at}:nat:${az}`, addr, -500, {
        ...tags,
        Name: `${tags.Name}-nat-${az.slice(-1)}`,
      });
      addr.attributes.association_id = `eipassoc-${hexId(w.spec.seed, `filler:${at}:nat-eip:${az}:assoc`, 17)}`;
      addr.attributes.network_interface_id = `eni-${hexId(w.spec.seed, `filler:${at}:nat-eni:${az}`, 17)}`;
      routeTable(w, vpc, `filler:${at}:rt-priv:${az}`, [priv[i]!], { nat_gateway_id: nat.nativeId }, nat, {
        ...tags,
        Name: `${tags.Name}-private-${az.slice(-1)}`,
      });
      w.alarm({
        account,
        region: p.region,
        name: `${tags.Name}-nat-${az.slice(-1)}-errors`,
        namespace: 'AWS/NATGateway',
        metric: 'ErrorPortAllocation',
        dimension: ['NatGatewayId', nat.nativeId],
        target: nat,
        actions: true,
      });
    });
    const albSg = w.securityGroup(vpc, `filler:${at}:sg-alb`, `${tags.Name}-alb`, [
      { ip_protocol: 'tcp', from_port: 443, to_port: 443, cidr_ipv4: '0.0.0.0/0' },
    ]);
    return { place: p, account, vpc, pub, priv, albSg, tags };
  });

  for (let i = 0; i < count; i++) {
    if (only && (i < only.from || i >= only.to)) {
      services.push(undefined); // another part of the world builds this stack
      continue;
    }
    w.owner = i;
    const net = networks[i % networks.length]!;
    const { account, vpc, pub, priv, albSg } = net;
    const region = net.place.region;
    const r = new Random(w.spec.seed, `filler:${i}`);
    const name = `${WORDS[i % WORDS.length]}-${Math.floor(i / WORDS.length) + 1}`;
    const key = `filler:${i}`;
    const env = net.place.account === 'prod' ? 'prod' : net.place.account;
    const tags = {
      service: name,
      team: `team-${WORDS[(i * 7) % WORDS.length]}`,
      owner: `${WORDS[(i * 7) % WORDS.length]}@acme.example`,
      env,
    };
    const instanceType = TYPES[i % TYPES.length]!;
    const appSg = w.securityGroup(
      vpc,
      `${key}:sg-app`,
      `${name}-app`,
      [{ ip_protocol: 'tcp', from_port: 8080, to_port: 8080, referenced_group_id: albSg.nativeId }],
      tags,
    );
    const lt = launchTemplate(w, account, region, `${name}-lt`, instanceType, 'gp3', 40);
    const n = r.int(2, 4);
    const instances: InventoryResource[] = [];
    for (let j = 0; j < n; j++) {
      instances.push(
        w.instance({
          key: `${key}:i${j}`,
          subnet: priv[j % 3]!,
          name: `${name}-${j + 1}`,
          instanceType,
          sgs: [appSg],
          tags,
          launchDay: -r.int(20, 300),
          rootVolume: { type: 'gp3', size: 40 },
          launchTemplate: lt,
        }),
      );
    }
    const { alb, tg } = loadBalancer(w, account, region, `${name}-alb`, pub, [albSg], instances, tags, true);
    const asg = autoScalingGroup(w, account, region, `${name}-asg`, priv, instances, 2, 6, n, lt, [tg], tags);
    w.alarm({
      account,
      region,
      name: `${name}-alb-5xx`,
      namespace: 'AWS/ApplicationELB',
      metric: 'HTTPCode_ELB_5XX_Count',
      dimension: ['LoadBalancer', alb.nativeId],
      target: alb,
      actions: true,
    });
    w.alarm({
      account,
      region,
      name: `${name}-asg-cpu`,
      namespace: 'AWS/EC2',
      metric: 'CPUUtilization',
      dimension: ['AutoScalingGroupName', asg.nativeId],
      target: asg,
      actions: true,
    });
    w.logGroup(account, region, `/ecs/${name}`, r.pick([30, 90, 365]), r.between(1, 60), tags);
    if (i % 3 === 0) {
      const vol = instances[0]!.attributes.block_device_mappings as Array<{ volume_id: string }>;
      w.snapshot({
        key: `${key}:snap`,
        account,
        region,
        volumeId: vol[0]!.volume_id,
        size: 40,
        startDay: -r.int(1, 60),
        tags,
      });
    }
    if (i % 5 === 0) {
      const dbSg = w.securityGroup(
        vpc,
        `${key}:sg-db`,
        `${name}-db`,
        [{ ip_protocol: 'tcp', from_port: 3306, to_port: 3306, referenced_group_id: appSg.nativeId }],
        tags,
      );
      const db = rds(w, account, region, `${name}-db`, {
        class: 'db.t3.large',
        multi_az: true,
        backup_retention_period: 7,
        deletion_protection: true,
        publicly_accessible: false,
        storage_encrypted: true,
        allocated_storage: 50 + r.int(0, 10) * 10,
        az: net.place.azs[i % 3]!,
        sgs: [dbSg],
        subnetGroup: `${name}-db-subnets`,
        tags,
        createDay: -r.int(100, 700),
      });
      w.alarm({
        account,
        region,
        name: `${name}-db-cpu`,
        namespace: 'AWS/RDS',
        metric: 'CPUUtilization',
        dimension: ['DBInstanceIdentifier', db.nativeId],
        target: db,
        actions: true,
      });
      for (const inst of instances)
        w.link(inst.arn, db.arn, 'depends-on', 'inferred:security-group-rule', 0.8);
    }
    if (i % 4 === 1) {
      const table = w.add({
        type: 'aws_dynamodb_table',
        nativeId: `${name}-items`,
        arn: `arn:aws:dynamodb:${region}:${account}:table/${name}-items`,
        account,
        region,
        name: `${name}-items`,
        tags,
        attributes: {
          name: `${name}-items`,
          table_status: 'ACTIVE',
          billing_mode: 'PAY_PER_REQUEST',
          point_in_time_recovery_description: { point_in_time_recovery_status: 'ENABLED' },
          deletion_protection_enabled: true,
          item_count: r.int(1000, 5_000_000),
          table_size_bytes: r.int(1, 900) * 1024 ** 2,
        },
      });
      for (const inst of instances) w.link(inst.arn, table.arn, 'depends-on', 'inferred:service-tag', 0.6);
    }
    if (i % 10 === 2) {
      bucket(w, account, region, `acme-${name}-${hexId(w.spec.seed, `${key}:bucket`, 6)}`, {
        publicAcl: false,
        blockAll: true,
        policy: null,
        tags,
        sizeGb: r.int(1, 400),
        lifecycle: true,
      });
    }
    services.push({ key, name, asg, tg, subnets: priv, appSg, instanceType, instances, tags });
    w.owner = null;
  }
  return services;
}
