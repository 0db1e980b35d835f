import type { InventoryResource } from '../model';
import { hexId } from './random';
import type { WorldBuilder } from './world';

const E1 = 'us-east-1';
const W2 = 'us-west-2';

/** Handles to the seeded resources that the timeline, metrics and tests refer to by role. */
export interface Seeded {
  prodVpc: InventoryResource;
  privateSubnets: InventoryResource[];
  publicSubnets: InventoryResource[];
  natProd: InventoryResource;
  natIdle: InventoryResource;
  sgWeb: InventoryResource;
  checkoutAlb: InventoryResource;
  checkoutTg: InventoryResource;
  paymentsDb: InventoryResource;
  reportingDb: InventoryResource;
  reportingWorker: InventoryResource;
  tmpMigrationVolume: InventoryResource;
  sensitiveBucket: InventoryResource;
  services: string[];
}

/**
 * The seeded environment: a prod account (us-east-1, with a DR footprint in us-west-2), staging and
 * shared services, and every defect of the reference list (domain-notes §6.3), each on a named
 * resource with a stable id. The state built here is the environment as of day -7; the timeline applies
 * what happened after.
 */
export function buildSeeded(w: WorldBuilder): Seeded {
  const { prod, staging, shared } = w.accounts;
  const seed = w.spec.seed;

  // ---- accounts, IAM summary, CloudTrail ----
  const orgId = `o-${hexId(seed, 'org', 10)}`;
  for (const [name, acct, mfa] of [
    ['acme-prod', prod, true],
    ['acme-staging', staging, false], // root MFA off
    ['acme-shared-services', shared, true],
  ] as const) {
    w.add({
      type: 'aws_account',
      nativeId: acct,
      arn: `arn:aws:iam::${acct}:root`,
      account: acct,
      region: 'global',
      name,
      attributes: {
        account_id: acct,
        account_aliases: [name],
        organization_id: orgId,
        account_mfa_enabled: mfa,
        account_access_keys_present: 0,
      },
    });
    const multi = acct !== staging; // staging logs one region only
    const trailName = `${name}-trail`;
    w.add({
      type: 'aws_cloudtrail_trail',
      nativeId: trailName,
      arn: `arn:aws:cloudtrail:${E1}:${acct}:trail/${trailName}`,
      account: acct,
      region: E1,
      name: trailName,
      attributes: {
        name: trailName,
        home_region: E1,
        is_multi_region_trail: multi,
        is_logging: true,
        is_organization_trail: false,
        s3_bucket_name: `${name}-cloudtrail-${hexId(seed, `trail:${acct}`, 6)}`,
        log_file_validation_enabled: true,
      },
    });
  }

  // ---- prod network: 3 AZs, one NAT gateway in 1a for every private subnet (AZ SPOF) ----
  const env = { env: 'prod' };
  const prodVpc = w.vpc(prod, E1, 'prod:vpc', '10.0.0.0/16', { Name: 'prod', ...env });
  const azs = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  const publicSubnets = azs.map((az, i) =>
    w.subnet(prodVpc, `prod:public:${az}`, az, `10.0.${i}.0/24`, true, {
      Name: `prod-public-${az.slice(-1)}`,
      ...env,
    }),
  );
  const privateSubnets = azs.map((az, i) =>
    w.subnet(prodVpc, `prod:private:${az}`, az, `10.0.${10 + i}.0/24`, false, {
      Name: `prod-private-${az.slice(-1)}`,
      ...env,
    }),
  );
  const igwId = w.id('igw', 'prod:igw');
  const igw = w.add({
    type: 'aws_vpc_internet_gateway',
    nativeId: igwId,
    arn: w.ec2Arn(prod, E1, 'internet-gateway', igwId),
    account: prod,
    region: E1,
    tags: { Name: 'prod-igw', ...env },
    attributes: {
      internet_gateway_id: igwId,
      attachments: [{ vpc_id: prodVpc.nativeId, state: 'available' }],
    },
  });
  const natEip = eip(w, prod, E1, 'prod:nat-eip', -420, { Name: 'prod-nat-1a', ...env });
  const natProd = natGateway(w, publicSubnets[0]!, 'prod:nat-1a', natEip, -420, {
    Name: 'prod-nat-1a',
    ...env,
  });
  natEip.attributes.association_id = `eipassoc-${hexId(seed, 'prod:nat-eip:assoc', 17)}`;
  natEip.attributes.network_interface_id = `eni-${hexId(seed, 'prod:nat-eni', 17)}`;
  routeTable(w, prodVpc, 'prod:rt-public', publicSubnets, { gateway_id: igw.nativeId }, igw, {
    Name: 'prod-public',
    ...env,
  });
  routeTable(w, prodVpc, 'prod:rt-private', privateSubnets, { nat_gateway_id: natProd.nativeId }, natProd, {
    Name: 'prod-private',
    ...env,
  });

  // ---- security groups ----
  const allTraffic = { ip_protocol: '-1', from_port: null, to_port: null };
  const sgAlb = w.securityGroup(prodVpc, 'prod:sg-alb', 'sg-checkout-alb', [
    { ip_protocol: 'tcp', from_port: 443, to_port: 443, cidr_ipv4: '0.0.0.0/0' },
    { ip_protocol: 'tcp', from_port: 443, to_port: 443, cidr_ipv6: '::/0' },
  ]);
  const sgApp = w.securityGroup(prodVpc, 'prod:sg-app', 'sg-checkout-app', [
    { ip_protocol: 'tcp', from_port: 8080, to_port: 8080, referenced_group_id: sgAlb.nativeId },
  ]);
  const sgBastion = w.securityGroup(prodVpc, 'prod:sg-bastion', 'sg-bastion', [
    { ip_protocol: 'tcp', from_port: 22, to_port: 22, cidr_ipv4: '0.0.0.0/0' },
  ]);
  const sgLegacy = w.securityGroup(prodVpc, 'prod:sg-legacy-all', 'sg-legacy-all', [
    { ip_protocol: 'tcp', from_port: 0, to_port: 65535, cidr_ipv4: '0.0.0.0/0' },
  ]);
  // sg-web gets 3389 from ::/0 on day -1 (the timeline): alice's manual change.
  const sgWeb = w.securityGroup(prodVpc, 'prod:sg-web', 'sg-web', [
    { ip_protocol: 'tcp', from_port: 80, to_port: 80, referenced_group_id: sgAlb.nativeId },
  ]);
  const sgDb = w.securityGroup(prodVpc, 'prod:sg-db', 'sg-payments-db', [
    { ip_protocol: 'tcp', from_port: 3306, to_port: 3306, referenced_group_id: sgApp.nativeId },
    { ip_protocol: 'tcp', from_port: 3306, to_port: 3306, cidr_ipv4: '0.0.0.0/0' },
  ]);
  const sgInternal = w.securityGroup(prodVpc, 'prod:sg-internal', 'sg-internal', [
    { ...allTraffic, cidr_ipv4: '10.0.0.0/16' },
  ]);

  // ---- IAM: the toxic path (bastion role can read the Sensitive bucket), a stale console user ----
  const sensitiveName = `acme-customer-exports-${hexId(seed, 'bucket:sensitive', 6)}`;
  const bastionRole = role(w, prod, 'bastion-role', [
    {
      Effect: 'Allow',
      Action: ['s3:GetObject', 's3:ListBucket'],
      Resource: [`arn:aws:s3:::${sensitiveName}`, `arn:aws:s3:::${sensitiveName}/*`],
    },
  ]);
  const appRole = role(w, prod, 'checkout-app-role', [
    {
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
      Resource: [`arn:aws:dynamodb:${E1}:${prod}:table/orders`],
    },
  ]);
  role(w, shared, 'ci-deployer', [{ Effect: 'Allow', Action: ['*'], Resource: ['*'] }]); // admin *:*
  const bob = w.add({
    type: 'aws_iam_user',
    nativeId: 'bob',
    arn: `arn:aws:iam::${prod}:user/bob`,
    account: prod,
    region: 'global',
    name: 'bob',
    attributes: {
      name: 'bob',
      user_id: `AIDA${hexId(seed, 'user:bob', 16).toUpperCase()}`,
      create_date: w.iso(-700),
      password_enabled: true,
      mfa_enabled: false, // console user without MFA
      password_last_used: w.iso(-3, 10, 5),
      attached_policy_arns: ['arn:aws:iam::aws:policy/PowerUserAccess'],
    },
  });
  const bobKey = `AKIA${hexId(seed, 'key:bob', 16).toUpperCase()}`;
  w.add({
    type: 'aws_iam_access_key',
    nativeId: bobKey,
    arn: `arn:aws:iam::${prod}:user/bob/accesskey/${bobKey}`,
    account: prod,
    region: 'global',
    name: 'bob',
    attributes: {
      access_key_id: bobKey,
      user_name: 'bob',
      status: 'Active',
      create_date: w.iso(-200),
      access_key_last_used_date: w.iso(-2, 16, 40),
    },
  });
  w.link(`arn:aws:iam::${prod}:user/bob/accesskey/${bobKey}`, bob.arn, 'member-of');
  const alice = w.add({
    type: 'aws_iam_user',
    nativeId: 'alice',
    arn: `arn:aws:iam::${prod}:user/alice`,
    account: prod,
    region: 'global',
    name: 'alice',
    attributes: {
      name: 'alice',
      user_id: `AIDA${hexId(seed, 'user:alice', 16).toUpperCase()}`,
      create_date: w.iso(-500),
      password_enabled: true,
      mfa_enabled: true,
      password_last_used: w.iso(-1, 14, 10),
      attached_policy_arns: ['arn:aws:iam::aws:policy/AdministratorAccess'],
    },
  });
  void alice;

  // ---- checkout: ALB → target group → ASG (3 AZs), no alarms on the ALB (SRE finding) ----
  const checkoutTags = { service: 'checkout-api', team: 'payments', owner: 'payments@acme.example', ...env };
  const ltCheckout = launchTemplate(w, prod, E1, 'lt-checkout', 'm5.large', 'gp3', 30);
  const checkoutInstances = azs.map((_, i) =>
    w.instance({
      key: `prod:checkout:${i}`,
      subnet: privateSubnets[i]!,
      name: `checkout-api-${i + 1}`,
      instanceType: 'm5.large',
      sgs: [sgApp],
      tags: checkoutTags,
      launchDay: -60 + i,
      role: appRole,
      rootVolume: { type: 'gp3', size: 30 },
      launchTemplate: ltCheckout,
    }),
  );
  const { alb: checkoutAlb, tg: checkoutTg } = loadBalancer(
    w,
    prod,
    E1,
    'checkout-alb',
    publicSubnets,
    [sgAlb],
    checkoutInstances,
    checkoutTags,
    true,
  );
  const checkoutAsg = autoScalingGroup(
    w,
    prod,
    E1,
    'checkout-asg',
    privateSubnets,
    checkoutInstances,
    2,
    6,
    3,
    ltCheckout,
    [checkoutTg],
    checkoutTags,
  );
  w.alarm({
    account: prod,
    region: E1,
    name: 'checkout-asg-cpu-high',
    namespace: 'AWS/EC2',
    metric: 'CPUUtilization',
    dimension: ['AutoScalingGroupName', checkoutAsg.nativeId],
    target: checkoutAsg,
    actions: true,
  });
  w.alarm({
    account: prod,
    region: E1,
    name: 'prod-nat-1a-errors',
    namespace: 'AWS/NATGateway',
    metric: 'ErrorPortAllocation',
    dimension: ['NatGatewayId', natProd.nativeId],
    target: natProd,
    actions: true,
  });

  // ---- web: 14 Windows instances sharing sg-web (3389 from ::/0 appears on day -1) ----
  const webTags = { service: 'web-frontend', team: 'web', owner: 'web@acme.example', ...env };
  for (let i = 0; i < 14; i++) {
    w.instance({
      key: `prod:web:${i}`,
      subnet: privateSubnets[i % 3]!,
      name: `web-${String(i + 1).padStart(2, '0')}`,
      instanceType: 't3.large',
      sgs: [sgWeb],
      tags: webTags,
      launchDay: -90 + i,
      platform: 'windows',
      rootVolume: { type: 'gp3', size: 60 },
    });
  }

  // ---- batch: 12 workers from one launch template, each with a gp2 root (clustered gp2→gp3) ----
  const batchTags = { service: 'batch-workers', team: 'data', owner: 'data@acme.example', ...env };
  const ltBatch = launchTemplate(w, prod, E1, 'lt-batch', 't3.medium', 'gp2', 100);
  const batchInstances: InventoryResource[] = [];
  for (let i = 0; i < 12; i++) {
    batchInstances.push(
      w.instance({
        key: `prod:batch:${i}`,
        subnet: privateSubnets[i % 3]!,
        name: `batch-worker-${String(i + 1).padStart(2, '0')}`,
        instanceType: 't3.medium',
        sgs: [sgInternal],
        tags: batchTags,
        launchDay: -150 + i,
        rootVolume: { type: 'gp2', size: 100 },
        launchTemplate: ltBatch,
      }),
    );
  }
  const batchAsg = autoScalingGroup(
    w,
    prod,
    E1,
    'batch-asg',
    privateSubnets,
    batchInstances,
    12,
    12,
    12,
    ltBatch,
    [],
    batchTags,
  );
  // An alarm that notifies no one (SRE finding).
  w.alarm({
    account: prod,
    region: E1,
    name: 'high-cpu-batch',
    namespace: 'AWS/EC2',
    metric: 'CPUUtilization',
    dimension: ['AutoScalingGroupName', batchAsg.nativeId],
    target: batchAsg,
    actions: false,
  });

  // ---- scheduler: an ASG of capacity 1 in a single AZ ----
  const schedTags = { service: 'job-scheduler', team: 'platform', owner: 'platform@acme.example', ...env };
  const schedInstance = w.instance({
    key: 'prod:scheduler:0',
    subnet: privateSubnets[0]!,
    name: 'job-scheduler-1',
    instanceType: 't3.medium',
    sgs: [sgInternal],
    tags: schedTags,
    launchDay: -40,
    rootVolume: { type: 'gp3', size: 30 },
  });
  const schedAsg = autoScalingGroup(
    w,
    prod,
    E1,
    'job-scheduler-asg',
    [privateSubnets[0]!],
    [schedInstance],
    1,
    1,
    1,
    null,
    [],
    schedTags,
  );
  w.alarm({
    account: prod,
    region: E1,
    name: 'job-scheduler-cpu-high',
    namespace: 'AWS/EC2',
    metric: 'CPUUtilization',
    dimension: ['AutoScalingGroupName', schedAsg.nativeId],
    target: schedAsg,
    actions: true,
  });

  // ---- bastion: SSH open to the world, IMDSv1, public IP, a role that reads the Sensitive bucket ----
  w.instance({
    key: 'prod:bastion',
    subnet: publicSubnets[0]!,
    name: 'bastion',
    instanceType: 't3.micro',
    sgs: [sgBastion],
    tags: { service: 'bastion', team: 'platform', owner: 'platform@acme.example', ...env },
    launchDay: -380,
    imdsV2: false,
    publicIp: true,
    role: bastionRole,
    rootVolume: { type: 'gp3', size: 20 },
  });

  // ---- legacy: a previous-generation t2.medium behind an all-ports SG, IMDSv1 ----
  w.instance({
    key: 'prod:legacy-cron',
    subnet: publicSubnets[1]!,
    name: 'legacy-cron-01',
    instanceType: 't2.medium',
    sgs: [sgLegacy],
    tags: { service: 'legacy-cron', team: 'platform', owner: 'platform@acme.example', ...env },
    launchDay: -900,
    imdsV2: false,
    publicIp: true,
    rootVolume: { type: 'gp3', size: 40 },
  });

  // ---- reporting: an m5.large that becomes m5.xlarge on day -3, idle (max CPU < 5%) ----
  const reportingTags = { service: 'reporting', team: 'data', owner: 'data@acme.example', ...env };
  const reportingWorker = w.instance({
    key: 'prod:reporting-worker',
    subnet: privateSubnets[1]!,
    name: 'reporting-worker-01',
    instanceType: 'm5.large',
    sgs: [sgInternal],
    tags: reportingTags,
    launchDay: -250,
    rootVolume: { type: 'gp3', size: 50 },
  });

  // ---- analytics: a 1.5 TB gp2 data volume (gp3 needs paid IOPS to keep performance), unencrypted ----
  const analytics = w.instance({
    key: 'prod:analytics',
    subnet: privateSubnets[2]!,
    name: 'analytics-01',
    instanceType: 'm5.large',
    sgs: [sgInternal],
    tags: { service: 'analytics', team: 'data', owner: 'data@acme.example', ...env },
    launchDay: -320,
    rootVolume: { type: 'gp3', size: 30 },
  });
  w.volume({
    key: 'prod:analytics:data',
    account: prod,
    region: E1,
    az: 'us-east-1c',
    type: 'gp2',
    size: 1536,
    encrypted: false,
    createDay: -320,
    attachedTo: analytics,
    device: '/dev/sdf',
    tags: { Name: 'analytics-data', service: 'analytics', ...env },
  });

  // ---- unattached volumes: 200 GB gp2, 500 GB io1 at 4000 IOPS, 50 GB gp3 ----
  const orphanTags = { ...env, team: 'data' };
  w.volume({
    key: 'prod:orphan:gp2',
    account: prod,
    region: E1,
    az: 'us-east-1a',
    type: 'gp2',
    size: 200,
    encrypted: true,
    createDay: -210,
    tags: { Name: 'old-etl-scratch', ...orphanTags },
  });
  w.volume({
    key: 'prod:orphan:io1',
    account: prod,
    region: E1,
    az: 'us-east-1b',
    type: 'io1',
    size: 500,
    iops: 4000,
    encrypted: true,
    createDay: -180,
    tags: { Name: 'db-migration-io1', ...orphanTags },
  });
  w.volume({
    key: 'prod:orphan:gp3',
    account: prod,
    region: E1,
    az: 'us-east-1c',
    type: 'gp3',
    size: 50,
    encrypted: true,
    createDay: -95,
    tags: { Name: 'test-restore', ...orphanTags },
  });
  // A temporary volume that exists at day -7 and is deleted on day -5 (drift).
  const tmpMigrationVolume = w.volume({
    key: 'prod:tmp-migration',
    account: prod,
    region: E1,
    az: 'us-east-1a',
    type: 'gp3',
    size: 80,
    encrypted: true,
    createDay: -9,
    tags: { Name: 'tmp-migration', ...orphanTags },
  });

  // ---- snapshots: 120 and 400 days old, two of them orphaned (their volume is gone) ----
  const analyticsVol = w.get(w.id('vol', 'prod:analytics:data'))!;
  w.snapshot({
    key: 'prod:snap:120',
    account: prod,
    region: E1,
    volumeId: analyticsVol.nativeId,
    size: 1536,
    startDay: -120,
    encrypted: false,
    tags: { Name: 'analytics-data-q2' },
  });
  w.snapshot({
    key: 'prod:snap:400',
    account: prod,
    region: E1,
    volumeId: reportingWorker.attributes.block_device_mappings
      ? String(
          (reportingWorker.attributes.block_device_mappings as Array<{ volume_id: string }>)[0]!.volume_id,
        )
      : '',
    size: 50,
    startDay: -400,
    tags: { Name: 'reporting-root-2025' },
  });
  w.snapshot({
    key: 'prod:snap:orphan1',
    account: prod,
    region: E1,
    volumeId: w.id('vol', 'prod:deleted:2024-a'),
    size: 250,
    startDay: -130,
    tags: { Name: 'pre-upgrade-backup' },
  });
  w.snapshot({
    key: 'prod:snap:orphan2',
    account: prod,
    region: E1,
    volumeId: w.id('vol', 'prod:deleted:2024-b'),
    size: 100,
    startDay: -400,
    tags: { Name: 'old-ci-cache' },
  });

  // ---- an unassociated EIP (a second one is allocated on day -2, drift) ----
  eip(w, prod, E1, 'prod:eip:idle-1', -300, { Name: 'old-vpn-endpoint', ...env });

  // ---- an ALB with no target groups ----
  loadBalancer(
    w,
    prod,
    E1,
    'old-marketing-alb',
    publicSubnets,
    [sgAlb],
    null,
    { service: 'marketing-site', team: 'web', ...env },
    false,
  );

  // ---- log groups without retention ----
  for (const name of ['/aws/lambda/legacy-export', '/ecs/batch-workers', '/var/log/legacy-cron'])
    w.logGroup(prod, E1, name, null, 42);
  w.logGroup(prod, E1, '/ecs/checkout-api', 30, 18, checkoutTags);

  // ---- data stores ----
  const dbSubnets = 'prod-db-subnets';
  const paymentsDb = rds(w, prod, E1, 'prod-payments-db', {
    class: 'db.m5.large',
    multi_az: false,
    backup_retention_period: 7, // becomes 0 on day -2 (drift)
    deletion_protection: false,
    publicly_accessible: true,
    storage_encrypted: true,
    allocated_storage: 200,
    az: 'us-east-1a',
    sgs: [sgDb],
    subnetGroup: dbSubnets,
    tags: { service: 'payments', team: 'payments', owner: 'payments@acme.example', ...env },
    createDay: -600,
  });
  for (const inst of checkoutInstances)
    w.link(inst.arn, paymentsDb.arn, 'depends-on', 'inferred:security-group-rule', 0.8);
  const reportingDb = rds(w, prod, E1, 'legacy-reporting-db', {
    class: 'db.m5.large',
    multi_az: true,
    backup_retention_period: 7,
    deletion_protection: true,
    publicly_accessible: false,
    storage_encrypted: false, // unencrypted RDS
    allocated_storage: 100,
    az: 'us-east-1b',
    sgs: [sgInternal],
    subnetGroup: dbSubnets,
    tags: { service: 'reporting', team: 'data', owner: 'data@acme.example', ...env },
    createDay: -800,
  });
  // Multi-AZ db.m5.large has no sourced price: this one is costed from its single-AZ price by the pricing
  // module only if a price exists; it keeps multi_az=true for the SRE checks to stay quiet.
  w.alarm({
    account: prod,
    region: E1,
    name: 'legacy-reporting-db-cpu',
    namespace: 'AWS/RDS',
    metric: 'CPUUtilization',
    dimension: ['DBInstanceIdentifier', reportingDb.nativeId],
    target: reportingDb,
    actions: true,
  });
  rdsSnapshot(w, prod, E1, 'legacy-reporting-db-final-2025', 'legacy-reporting-db', 100, -200);

  const cacheId = 'sessions-cache';
  const cache = w.add({
    type: 'aws_elasticache_replication_group',
    nativeId: cacheId,
    arn: `arn:aws:elasticache:${E1}:${prod}:replicationgroup:${cacheId}`,
    account: prod,
    region: E1,
    name: cacheId,
    tags: { service: 'checkout-api', ...env },
    attributes: {
      replication_group_id: cacheId,
      automatic_failover: 'disabled',
      multi_az: 'disabled',
      cache_node_type: 'cache.m5.large',
      member_clusters: [`${cacheId}-001`],
      status: 'available',
      at_rest_encryption_enabled: true,
      transit_encryption_enabled: true,
    },
  });
  for (const inst of checkoutInstances)
    w.link(inst.arn, cache.arn, 'depends-on', 'inferred:service-tag', 0.6);
  const orders = w.add({
    type: 'aws_dynamodb_table',
    nativeId: 'orders',
    arn: `arn:aws:dynamodb:${E1}:${prod}:table/orders`,
    account: prod,
    region: E1,
    name: 'orders',
    tags: { service: 'checkout-api', ...env },
    attributes: {
      name: 'orders',
      table_status: 'ACTIVE',
      billing_mode: 'PAY_PER_REQUEST',
      point_in_time_recovery_description: { point_in_time_recovery_status: 'DISABLED' },
      deletion_protection_enabled: true,
      item_count: 18_400_000,
      table_size_bytes: 41_000_000_000,
    },
  });
  w.link(appRole.arn, orders.arn, 'depends-on', 'inferred:iam-policy', 0.9);

  // ---- buckets: one public by ACL, one Sensitive with a public policy ----
  bucket(w, prod, E1, `acme-public-assets-${hexId(seed, 'bucket:public', 6)}`, {
    publicAcl: true,
    blockAll: false,
    policy: null,
    tags: { service: 'marketing-site', ...env },
    sizeGb: 120,
  });
  const sensitiveBucket = bucket(w, prod, E1, sensitiveName, {
    publicAcl: false,
    blockAll: false,
    policy: {
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'PartnerDownloads',
          Effect: 'Allow',
          Principal: '*',
          Action: 's3:GetObject',
          Resource: `arn:aws:s3:::${sensitiveName}/*`,
        },
      ],
    },
    tags: { DataClassification: 'Sensitive', service: 'reporting', ...env },
    sizeGb: 2300,
  });
  w.link(bastionRole.arn, sensitiveBucket.arn, 'depends-on', 'inferred:iam-policy', 0.9);
  bucket(w, prod, E1, `acme-prod-logs-${hexId(seed, 'bucket:logs', 6)}`, {
    publicAcl: false,
    blockAll: true,
    policy: null,
    tags: { service: 'platform', ...env },
    sizeGb: 800,
    lifecycle: true,
  });

  // ---- DNS ----
  route53(w, prod, 'checkout.acme.example', checkoutAlb);

  // ---- staging: an idle NAT gateway, a long-stopped instance with a 100 GB gp2 root ----
  const stg = { env: 'staging' };
  const stagingVpc = w.vpc(staging, E1, 'staging:vpc', '10.20.0.0/16', { Name: 'staging', ...stg });
  const stagingPublic = w.subnet(stagingVpc, 'staging:public:a', 'us-east-1a', '10.20.0.0/24', true, {
    Name: 'staging-public-a',
    ...stg,
  });
  const stagingPrivate = w.subnet(stagingVpc, 'staging:private:a', 'us-east-1a', '10.20.10.0/24', false, {
    Name: 'staging-private-a',
    ...stg,
  });
  const idleEip = eip(w, staging, E1, 'staging:nat-eip', -200, { Name: 'staging-nat', ...stg });
  const natIdle = natGateway(w, stagingPublic, 'staging:nat', idleEip, -200, { Name: 'staging-nat', ...stg });
  idleEip.attributes.association_id = `eipassoc-${hexId(seed, 'staging:nat-eip:assoc', 17)}`;
  routeTable(
    w,
    stagingVpc,
    'staging:rt-private',
    [stagingPrivate],
    { nat_gateway_id: natIdle.nativeId },
    natIdle,
    { Name: 'staging-private', ...stg },
  );
  w.alarm({
    account: staging,
    region: E1,
    name: 'staging-nat-errors',
    namespace: 'AWS/NATGateway',
    metric: 'ErrorPortAllocation',
    dimension: ['NatGatewayId', natIdle.nativeId],
    target: natIdle,
    actions: true,
  });
  const sgStaging = w.securityGroup(stagingVpc, 'staging:sg-internal', 'sg-staging-internal', [
    { ip_protocol: '-1', from_port: null, to_port: null, cidr_ipv4: '10.20.0.0/16' },
  ]);
  w.instance({
    key: 'staging:old-jenkins',
    subnet: stagingPrivate,
    name: 'old-jenkins',
    instanceType: 'm5.large',
    sgs: [sgStaging],
    tags: { service: 'ci', team: 'platform', owner: 'platform@acme.example', ...stg },
    launchDay: -500,
    state: 'stopped',
    stoppedDay: -45,
    rootVolume: { type: 'gp2', size: 100 },
  });

  // ---- shared services and the us-west-2 DR footprint (clean) ----
  const sharedVpc = w.vpc(shared, E1, 'shared:vpc', '10.30.0.0/16', { Name: 'shared', env: 'shared' });
  w.subnet(sharedVpc, 'shared:private:a', 'us-east-1a', '10.30.10.0/24', false, {
    Name: 'shared-private-a',
    env: 'shared',
  });
  const drVpc = w.vpc(prod, W2, 'dr:vpc', '10.40.0.0/16', { Name: 'prod-dr', ...env });
  for (const [i, az] of ['us-west-2a', 'us-west-2b', 'us-west-2c'].entries())
    w.subnet(drVpc, `dr:private:${az}`, az, `10.40.${10 + i}.0/24`, false, {
      Name: `prod-dr-private-${az.slice(-1)}`,
      ...env,
    });
  bucket(w, prod, W2, `acme-dr-backups-${hexId(seed, 'bucket:dr', 6)}`, {
    publicAcl: false,
    blockAll: true,
    policy: null,
    tags: { service: 'platform', ...env },
    sizeGb: 5200,
    lifecycle: true,
  });

  return {
    prodVpc,
    privateSubnets,
    publicSubnets,
    natProd,
    natIdle,
    sgWeb,
    checkoutAlb,
    checkoutTg,
    paymentsDb,
    reportingDb,
    reportingWorker,
    tmpMigrationVolume,
    sensitiveBucket,
    services: [
      'checkout-api',
      'web-frontend',
      'batch-workers',
      'job-scheduler',
      'bastion',
      'legacy-cron',
      'reporting',
      'analytics',
      'payments',
      'marketing-site',
    ],
  };
}

// ---------- builders shared with the filler ----------

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
