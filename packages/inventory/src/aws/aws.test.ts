import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetBucketAclCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient, type AwsStub } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import type { CollectedInventory, InventoryResource } from '../model';
import { snakeKey } from './shape';
import { stateTransitionTime } from './ec2.collect';
import {
  createAwsConnector,
  type AwsClientCtor,
  type AwsClientFactory,
  type AwsConnectorOptions,
  type SdkClient,
} from './index';
import { flattenRules } from './vpc.collect';

const here = dirname(fileURLToPath(import.meta.url));
const ACCOUNT = '123456789012';
const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};

// ----- recorded-looking responses, served through the SDK's own middleware stack -----

interface FixtureEntry {
  input: Record<string, unknown>;
  output?: Record<string, unknown>;
  error?: { name: string; message: string; httpStatusCode: number };
}
interface Fixture {
  client: string;
  region: string; // '*' for global services
  operations: Record<string, FixtureEntry[]>;
}

/** JSON has no dates; the SDK returns Date objects for timestamps, so the fixtures get them too. */
const DATE_KEY = /(Time|Date|Timestamp|DateTime|PasswordLastUsed)$/;
const reviveDates = (key: string, value: unknown) =>
  typeof value === 'string' && DATE_KEY.test(key) && /^\d{4}-\d{2}-\d{2}T/.test(value)
    ? new Date(value)
    : value;

const FIXTURES: Fixture[] = readdirSync(join(here, 'fixtures'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(here, 'fixtures', f), 'utf8'), reviveDates) as Fixture);

/** Pagination tokens must match exactly: a page-2 request never falls back to the page-1 answer. */
const TOKENS = ['NextToken', 'nextToken', 'Marker', 'ContinuationToken'];

function awsError(
  name: string,
  message: string,
  httpStatusCode: number,
  extra: Record<string, unknown> = {},
) {
  return Object.assign(new Error(message), {
    name,
    $fault: httpStatusCode >= 500 ? 'server' : 'client',
    $metadata: {
      httpStatusCode,
      requestId: 'c0ffee00-0000-4000-8000-000000000000',
      attempts: 1,
      totalRetryDelay: 0,
    },
    ...extra,
  });
}

type Sendable = { send(command: unknown): Promise<Record<string, unknown>> };
// aws-sdk-client-mock types its stubs by the client's input/output unions; this file mixes services.
type AnyStub = AwsStub<object, { $metadata: object }, unknown>;

/**
 * aws-sdk-client-mock stubs `send`, which would skip the SDK's middleware and with it the retry
 * strategy under test. So each real client gets a transport placed right after the SDK's retry
 * middleware, which hands the command to a mocked twin client: the mock decides the answers and
 * records the calls, while the real client's retries, paginators and our limiter all run.
 */
class FakeAws {
  inFlight = 0;
  maxInFlight = 0;
  private readonly twins = new Map<string, { twin: Sendable; stub: AnyStub }>();

  constructor(private readonly latencyMs = 2) {}

  stub(Ctor: AwsClientCtor<SdkClient>, region: string): AnyStub {
    return this.twin(Ctor, region).stub;
  }

  private twin(Ctor: AwsClientCtor<SdkClient>, region: string) {
    const key = `${Ctor.name}|${region}`;
    let entry = this.twins.get(key);
    if (!entry) {
      const twin = new Ctor({ region, credentials: CREDENTIALS, maxAttempts: 1, retryMode: 'standard' });
      const stub = mockClient(twin as unknown as EC2Client) as unknown as AnyStub;
      stub.send.callsFake(async (command: unknown) => ({
        $metadata: {},
        ...(await answer(Ctor.name, region, command as { input: Record<string, unknown> })),
      }));
      entry = { twin: twin as unknown as Sendable, stub };
      this.twins.set(key, entry);
    }
    return entry;
  }

  readonly factory: AwsClientFactory = (Ctor, config) => {
    const client = new Ctor(config);
    const { twin } = this.twin(Ctor as AwsClientCtor<SdkClient>, config.region);
    const transport = (_next: unknown, context: Record<string, unknown>) => async () => {
      const command = (context.__smithy_context as { commandInstance: unknown }).commandInstance;
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      try {
        await new Promise((r) => setTimeout(r, this.latencyMs));
        const output = await twin.send(command);
        return { output: { $metadata: {}, ...output }, response: {} };
      } finally {
        this.inFlight--;
      }
    };
    (client.middlewareStack as unknown as { addRelativeTo(m: unknown, o: object): void }).addRelativeTo(
      transport,
      {
        relation: 'after',
        toMiddleware: 'retryMiddleware',
        name: 'fakeAwsTransport',
      },
    );
    return client;
  };

  calls(Ctor: AwsClientCtor<SdkClient>, region: string, command: new (input: never) => object) {
    return this.stub(Ctor, region).commandCalls(command as never);
  }
}

async function answer(clientName: string, region: string, command: { input: Record<string, unknown> }) {
  const operation = command.constructor.name.replace(/Command$/, '');
  const input = command.input;
  const candidates = FIXTURES.filter(
    (f) => f.client === clientName && (f.region === region || f.region === '*'),
  )
    .flatMap((f) => f.operations[operation] ?? [])
    .filter(
      (e) =>
        Object.entries(e.input).every(([k, v]) => isDeepStrictEqual(input[k], v)) &&
        TOKENS.every((t) => (input[t] ?? undefined) === (e.input[t] ?? undefined)),
    )
    .sort((a, b) => Object.keys(b.input).length - Object.keys(a.input).length);
  const entry = candidates[0];
  if (!entry) return {}; // an empty account: no items, no next page
  if (entry.error) throw awsError(entry.error.name, entry.error.message, entry.error.httpStatusCode);
  return structuredClone(entry.output ?? {});
}

function connect(fake: FakeAws, options: Partial<AwsConnectorOptions> = {}) {
  return createAwsConnector({
    regions: ['us-east-1'],
    credentials: CREDENTIALS,
    clientFactory: fake.factory,
    ...options,
  });
}

function index(inv: CollectedInventory) {
  const byArn = new Map(inv.resources.map((r) => [r.arn, r]));
  const get = (arn: string): InventoryResource => {
    const r = byArn.get(arn);
    if (!r) throw new Error(`no resource ${arn}`);
    return r;
  };
  const edge = (from: string, to: string, kind: string) =>
    inv.edges.some((e) => e.from === from && e.to === to && e.kind === kind);
  return { byArn, get, edge };
}

const ec2 = (region: string, kind: string, id: string) => `arn:aws:ec2:${region}:${ACCOUNT}:${kind}/${id}`;
const I = {
  web1: ec2('us-east-1', 'instance', 'i-0a1b2c3d4e5f60001'),
  bastion: ec2('us-east-1', 'instance', 'i-0a1b2c3d4e5f60002'),
  batch: ec2('us-east-1', 'instance', 'i-0a1b2c3d4e5f60003'),
  web2: ec2('us-east-1', 'instance', 'i-0a1b2c3d4e5f60004'),
  eu: ec2('eu-west-1', 'instance', 'i-07e6d5c4b3a291801'),
};
const ALB = `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:loadbalancer/app/web-alb/50dc6c495c0c9188`;
const TG = `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:targetgroup/web-tg/6d0ecf831eec9f09`;

describe('AWS connector', () => {
  // Pages, throttling, exhausted retries and refused calls: aws.peer.test.ts, through the SDK's wire
  // protocols. What stays here maps fields the recorded AWS examples do not have.
  it('leaves terminated instances and deleted NAT gateways out of the inventory', async () => {
    const inv = await connect(new FakeAws()).collect({});
    const { byArn } = index(inv);
    expect(byArn.has(I.web2)).toBe(true);
    expect(byArn.has(ec2('us-east-1', 'instance', 'i-0a1b2c3d4e5f60009'))).toBe(false);
    expect(byArn.has(ec2('us-east-1', 'natgateway', 'nat-0ffff0000dead0001'))).toBe(false);
    expect(inv.metrics).toEqual([]);
    expect(inv.costs).toEqual([]);
    expect(inv.events).toEqual([]);
  });

  it('maps EC2 instances, volumes and snapshots with Steampipe names and their edges', async () => {
    const inv = await connect(new FakeAws()).collect({});
    const { get, edge, byArn } = index(inv);

    const web1 = get(I.web1);
    expect(web1).toMatchObject({
      type: 'aws_ec2_instance',
      nativeId: 'i-0a1b2c3d4e5f60001',
      accountId: ACCOUNT,
      region: 'us-east-1',
      availabilityZone: 'us-east-1a',
      name: 'web-1',
      sizeValue: 2,
      sizeUnit: 'vCPU',
    });
    expect(web1.tags).toMatchObject({ Name: 'web-1', env: 'prod', service: 'checkout-api' });
    expect(web1.attributes).toMatchObject({
      instance_id: 'i-0a1b2c3d4e5f60001',
      instance_type: 'm5.large',
      instance_state: 'running',
      launch_time: '2025-06-02T09:12:44.000Z',
      state_transition_time: null,
      availability_zone: 'us-east-1a',
      subnet_id: 'subnet-01a2b3c4d5e6f7a82',
      vpc_id: 'vpc-0f3e2d1c0b9a87654',
      security_groups: [{ group_id: 'sg-0c1d2e3f4a5b60002', group_name: 'web' }],
      iam_instance_profile_arn: `arn:aws:iam::${ACCOUNT}:instance-profile/web-instance-profile`,
      public_ip_address: null,
      metadata_options: { http_tokens: 'required', http_put_response_hop_limit: 2, http_endpoint: 'enabled' },
      platform: null,
      platform_details: 'Linux/UNIX',
      architecture: 'x86_64',
      ebs_optimized: true,
      launch_template: { launch_template_id: 'lt-0d1e2f3a4b5c60001', version: '3' },
    });
    // The template's default version, as instances launched from it get it (DescribeLaunchTemplateVersions).
    expect(get(ec2('us-east-1', 'launch-template', 'lt-0d1e2f3a4b5c60001')).attributes).toMatchObject({
      default_version_number: 3,
      default_version: {
        instance_type: 'm5.large',
        block_device_mappings: [
          { device_name: '/dev/xvda', ebs: { volume_type: 'gp2', volume_size: 30, encrypted: true } },
        ],
        metadata_options: { http_tokens: 'required' },
      },
    });
    expect(get(I.bastion).attributes).toMatchObject({
      public_ip_address: '54.210.33.17',
      metadata_options: { http_tokens: 'optional' },
    });
    expect(get(I.batch).attributes).toMatchObject({
      instance_state: 'stopped',
      state_transition_time: '2025-09-01T18:04:00.000Z',
      platform: 'windows',
    });
    expect(get(I.batch).sizeValue).toBe(4);

    const sgWeb = ec2('us-east-1', 'security-group', 'sg-0c1d2e3f4a5b60002');
    expect(edge(I.web1, ec2('us-east-1', 'subnet', 'subnet-01a2b3c4d5e6f7a82'), 'member-of')).toBe(true);
    expect(edge(I.web1, sgWeb, 'protected-by')).toBe(true);
    expect(edge(I.web1, `arn:aws:iam::${ACCOUNT}:role/web-instance-role`, 'uses-role')).toBe(true);
    expect(edge(I.web2, `arn:aws:iam::${ACCOUNT}:role/web-instance-role`, 'uses-role')).toBe(true);
    expect(edge(I.bastion, `arn:aws:iam::${ACCOUNT}:role/web-instance-role`, 'uses-role')).toBe(false);

    const root = get(ec2('us-east-1', 'volume', 'vol-0e1d2c3b4a5968701'));
    expect(root).toMatchObject({
      type: 'aws_ebs_volume',
      sizeValue: 30,
      sizeUnit: 'GiB',
      name: 'web-1-root',
      availabilityZone: 'us-east-1a',
    });
    expect(root.attributes).toMatchObject({
      volume_id: 'vol-0e1d2c3b4a5968701',
      volume_type: 'gp3',
      size: 30,
      iops: 3000,
      throughput: 125,
      encrypted: true,
      kms_key_id: `arn:aws:kms:us-east-1:${ACCOUNT}:key/4b6f0a2e-9c1d-4e8f-b2a7-0d3c5e7f9a11`,
      state: 'in-use',
      attachments: [{ instance_id: 'i-0a1b2c3d4e5f60001', device: '/dev/xvda', delete_on_termination: true }],
      create_time: '2025-06-02T09:12:44.912Z',
      snapshot_id: 'snap-0f9e8d7c6b5a43210',
      availability_zone: 'us-east-1a',
    });
    const unattached = get(ec2('us-east-1', 'volume', 'vol-0e1d2c3b4a5968703'));
    expect(unattached.attributes).toMatchObject({
      state: 'available',
      attachments: [],
      volume_type: 'gp2',
      size: 200,
      encrypted: false,
      snapshot_id: null,
    });
    expect(edge(root.arn, I.web1, 'attached-to')).toBe(true);
    expect(edge(ec2('us-east-1', 'volume', 'vol-0e1d2c3b4a5968704'), I.batch, 'attached-to')).toBe(true);

    const backup = get(`arn:aws:ec2:us-east-1::snapshot/snap-0a9b8c7d6e5f40001`);
    expect(backup).toMatchObject({ type: 'aws_ebs_snapshot', sizeValue: 200, sizeUnit: 'GiB' });
    expect(backup.attributes).toMatchObject({
      volume_id: 'vol-0e1d2c3b4a5968703',
      volume_size: 200,
      start_time: '2025-03-01T03:00:05.000Z',
      is_public: false,
    });
    expect(edge(backup.arn, unattached.arn, 'depends-on')).toBe(true);
    const orphan = get(`arn:aws:ec2:us-east-1::snapshot/snap-0a9b8c7d6e5f40002`);
    expect(orphan.attributes).toMatchObject({
      volume_id: 'vol-0dead0000beef0001',
      is_public: true,
      create_volume_permissions: [{ group: 'all' }],
    });
    expect(get(`arn:aws:ec2:us-east-1::snapshot/snap-0f9e8d7c6b5a43210`).attributes.volume_id).toBeNull();

    // Every edge is a stated fact between two collected resources.
    for (const e of inv.edges) {
      expect(e).toMatchObject({ source: 'config', confidence: 1 });
      expect(byArn.has(e.from) && byArn.has(e.to)).toBe(true);
    }
    expect(inv.edges.some((e) => e.to.includes('vol-0dead0000beef0001'))).toBe(false);
  });

  it('maps the network: security group rules, route tables, NAT, EIPs', async () => {
    const inv = await connect(new FakeAws()).collect({});
    const { get, edge } = index(inv);

    const bastion = get(ec2('us-east-1', 'security-group', 'sg-0c1d2e3f4a5b60001'));
    expect(bastion).toMatchObject({ type: 'aws_vpc_security_group', name: 'bastion' });
    expect(bastion.attributes).toMatchObject({
      group_id: 'sg-0c1d2e3f4a5b60001',
      group_name: 'bastion',
      vpc_id: 'vpc-0f3e2d1c0b9a87654',
    });
    expect(bastion.attributes.rules).toEqual([
      expect.objectContaining({
        type: 'ingress',
        ip_protocol: 'tcp',
        from_port: 22,
        to_port: 22,
        cidr_ipv4: '0.0.0.0/0',
        cidr_ipv6: null,
        referenced_group_id: null,
      }),
      expect.objectContaining({
        type: 'ingress',
        ip_protocol: 'tcp',
        from_port: 22,
        to_port: 22,
        cidr_ipv4: null,
        cidr_ipv6: '::/0',
      }),
      expect.objectContaining({
        type: 'egress',
        ip_protocol: '-1',
        from_port: null,
        to_port: null,
        cidr_ipv4: '0.0.0.0/0',
      }),
    ]);
    expect(get(ec2('us-east-1', 'security-group', 'sg-0c1d2e3f4a5b60002')).attributes.rules).toContainEqual(
      expect.objectContaining({
        type: 'ingress',
        from_port: 8080,
        referenced_group_id: 'sg-0c1d2e3f4a5b60003',
        cidr_ipv4: null,
      }),
    );

    const publicRt = ec2('us-east-1', 'route-table', 'rtb-0aa11bb22cc33dd44');
    const privateRt = ec2('us-east-1', 'route-table', 'rtb-0bb22cc33dd44ee55');
    const nat = ec2('us-east-1', 'natgateway', 'nat-0a1b2c3d4e5f67890');
    expect(get(privateRt).attributes.routes).toContainEqual(
      expect.objectContaining({
        destination_cidr_block: '0.0.0.0/0',
        nat_gateway_id: 'nat-0a1b2c3d4e5f67890',
      }),
    );
    expect(get(privateRt).attributes.associations).toContainEqual(expect.objectContaining({ main: true }));
    expect(edge(privateRt, nat, 'routes-to')).toBe(true);
    expect(edge(publicRt, ec2('us-east-1', 'internet-gateway', 'igw-0123456789abcdef0'), 'routes-to')).toBe(
      true,
    );
    // Explicit associations, and the VPC's main table for the subnet that has none.
    const subA = ec2('us-east-1', 'subnet', 'subnet-01a2b3c4d5e6f7a81');
    const subB = ec2('us-east-1', 'subnet', 'subnet-01a2b3c4d5e6f7a83');
    expect(edge(subA, publicRt, 'depends-on')).toBe(true);
    expect(edge(subB, privateRt, 'depends-on')).toBe(true);
    expect(get(subB).attributes).toMatchObject({
      route_table_id: 'rtb-0bb22cc33dd44ee55',
      route_table_is_main: true,
      availability_zone: 'us-east-1b',
    });
    expect(edge(subA, ec2('us-east-1', 'vpc', 'vpc-0f3e2d1c0b9a87654'), 'member-of')).toBe(true);

    expect(get(nat)).toMatchObject({ availabilityZone: 'us-east-1a' });
    expect(get(nat).attributes).toMatchObject({
      nat_gateway_id: 'nat-0a1b2c3d4e5f67890',
      subnet_id: 'subnet-01a2b3c4d5e6f7a81',
      state: 'available',
    });

    const idleEip = get(ec2('us-east-1', 'elastic-ip', 'eipalloc-0aaa1bbb2ccc3ddd4'));
    expect(idleEip.attributes).toMatchObject({
      allocation_id: 'eipalloc-0aaa1bbb2ccc3ddd4',
      public_ip: '44.195.12.8',
      association_id: null,
      instance_id: null,
    });
    expect(edge(ec2('us-east-1', 'elastic-ip', 'eipalloc-0bbb1ccc2ddd3eee5'), I.bastion, 'attached-to')).toBe(
      true,
    );
    expect(edge(ec2('us-east-1', 'elastic-ip', 'eipalloc-0f1e2d3c4b5a69788'), nat, 'attached-to')).toBe(true);
  });

  it('maps RDS, load balancers, Auto Scaling, alarms and the data stores', async () => {
    const inv = await connect(new FakeAws()).collect({});
    const { get, edge } = index(inv);

    const db = get(`arn:aws:rds:us-east-1:${ACCOUNT}:db:prod-db`);
    expect(db).toMatchObject({
      type: 'aws_rds_db_instance',
      nativeId: 'prod-db',
      name: 'prod-db',
      sizeValue: 100,
      sizeUnit: 'GiB',
    });
    expect(db.attributes).toMatchObject({
      db_instance_identifier: 'prod-db',
      class: 'db.m5.large',
      engine: 'postgres',
      engine_version: '15.5',
      multi_az: false,
      backup_retention_period: 0,
      deletion_protection: false,
      publicly_accessible: true,
      storage_encrypted: false,
      storage_type: 'gp2',
      allocated_storage: 100,
      iops: null,
      status: 'available',
      availability_zone: 'us-east-1a',
      secondary_availability_zone: null,
      vpc_security_groups: [{ vpc_security_group_id: 'sg-0c1d2e3f4a5b60004', status: 'active' }],
    });
    expect(edge(db.arn, ec2('us-east-1', 'security-group', 'sg-0c1d2e3f4a5b60004'), 'protected-by')).toBe(
      true,
    );

    const alb = get(ALB);
    expect(alb.attributes).toMatchObject({
      type: 'application',
      scheme: 'internet-facing',
      load_balancer_attributes: {
        'deletion_protection.enabled': 'false',
        'load_balancing.cross_zone.enabled': 'true',
      },
      listeners: [expect.objectContaining({ port: 443, protocol: 'HTTPS' })],
    });
    expect(alb.tags).toEqual({ service: 'checkout-api', env: 'prod' });
    const tg = get(TG);
    expect(tg.attributes.target_health_descriptions).toEqual([
      expect.objectContaining({
        target: expect.objectContaining({ id: 'i-0a1b2c3d4e5f60001' }),
        target_health: { state: 'healthy' },
      }),
      expect.objectContaining({
        target: expect.objectContaining({ id: 'i-0a1b2c3d4e5f60004' }),
        target_health: expect.objectContaining({ state: 'unhealthy' }),
      }),
    ]);
    expect(edge(ALB, TG, 'routes-to')).toBe(true);
    expect(edge(TG, I.web1, 'targets')).toBe(true);
    expect(edge(TG, I.web2, 'targets')).toBe(true);

    const asg = inv.resources.find((r) => r.type === 'aws_ec2_autoscaling_group');
    expect(asg?.attributes).toMatchObject({
      name: 'web-asg',
      min_size: 1,
      max_size: 1,
      desired_capacity: 1,
      availability_zones: ['us-east-1a'],
    });
    expect(edge(asg?.arn ?? '', I.web1, 'contains')).toBe(true);

    const cpu = get(`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:web-1-cpu-high`);
    expect(cpu.attributes).toMatchObject({
      dimensions: [{ name: 'InstanceId', value: 'i-0a1b2c3d4e5f60001' }],
      alarm_actions: [`arn:aws:sns:us-east-1:${ACCOUNT}:ops-alerts`],
      insufficient_data_actions: [],
    });
    expect(edge(cpu.arn, I.web1, 'monitors')).toBe(true);
    // Metric math names the load balancer inside the queries; the cache alarm names a member node.
    expect(edge(`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:web-alb-5xx`, ALB, 'monitors')).toBe(true);
    const cache = `arn:aws:elasticache:us-east-1:${ACCOUNT}:replicationgroup:sessions`;
    expect(edge(`arn:aws:cloudwatch:us-east-1:${ACCOUNT}:alarm:sessions-cache-cpu`, cache, 'monitors')).toBe(
      true,
    );
    expect(get(cache).attributes).toMatchObject({
      automatic_failover: 'disabled',
      multi_az: 'disabled',
      cache_node_type: 'cache.t3.medium',
    });

    const logs = get(`arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/aws/lambda/thumbnailer`);
    expect(logs.attributes).toMatchObject({
      retention_in_days: null,
      stored_bytes: 53687091200,
      creation_time: '2023-09-04T10:00:00.000Z',
    });

    const table = get(`arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/orders`);
    expect(table.tags).toEqual({ service: 'orders', team: 'payments' }); // two pages of ListTagsOfResource
    expect(table.attributes).toMatchObject({
      billing_mode: 'PAY_PER_REQUEST',
      deletion_protection_enabled: false,
      point_in_time_recovery_description: { point_in_time_recovery_status: 'DISABLED' },
    });

    const trail = get(`arn:aws:cloudtrail:us-east-1:${ACCOUNT}:trail/management-events`);
    expect(trail.attributes).toMatchObject({
      is_multi_region_trail: false,
      is_logging: true,
      home_region: 'us-east-1',
    });
    expect(edge(trail.arn, 'arn:aws:s3:::acme-cloudtrail-logs', 'depends-on')).toBe(true);
  });

  it('maps S3 buckets, treating settings that are not there or not readable as absent', async () => {
    const fake = new FakeAws();
    const inv = await connect(fake, { regions: ['us-east-1', 'eu-west-1'] }).collect({});
    const { get, byArn } = index(inv);

    const assets = get('arn:aws:s3:::acme-public-assets');
    expect(assets).toMatchObject({
      type: 'aws_s3_bucket',
      nativeId: 'acme-public-assets',
      region: 'us-east-1',
      tags: {},
    });
    expect(assets.attributes).toMatchObject({
      block_public_acls: false,
      block_public_policy: false,
      ignore_public_acls: false,
      restrict_public_buckets: false,
      bucket_policy_is_public: false,
      policy: null,
      versioning_enabled: false,
      lifecycle_rules: null,
      unreadable: [],
    });
    expect((assets.attributes.acl as { grants: unknown[] }).grants).toContainEqual({
      grantee: { type: 'Group', uri: 'http://acs.amazonaws.com/groups/global/AllUsers' },
      permission: 'READ',
    });

    const exports = get('arn:aws:s3:::acme-customer-exports');
    expect(exports.tags).toMatchObject({ DataClassification: 'Sensitive' });
    expect(exports.attributes).toMatchObject({
      bucket_policy_is_public: true,
      policy: {
        Statement: [expect.objectContaining({ Effect: 'Allow', Principal: '*', Action: 's3:GetObject' })],
      },
      server_side_encryption_configuration: {
        rules: [
          expect.objectContaining({
            apply_server_side_encryption_by_default: expect.objectContaining({ sse_algorithm: 'aws:kms' }),
          }),
        ],
      },
      versioning_enabled: true,
      lifecycle_rules: [expect.objectContaining({ id: 'expire-exports', status: 'Enabled' })],
      logging: null,
      unreadable: ['GetBucketLogging'],
    });

    // The bucket with no BucketRegion in ListBuckets was located; the Sydney one is outside the sync.
    expect(get('arn:aws:s3:::acme-cloudtrail-logs').region).toBe('us-east-1');
    expect(get('arn:aws:s3:::acme-eu-archive').region).toBe('eu-west-1');
    expect(byArn.has('arn:aws:s3:::acme-sydney-backups')).toBe(false);
    const aclCalls = [
      ...fake.calls(S3Client, 'us-east-1', GetBucketAclCommand),
      ...fake.calls(S3Client, 'eu-west-1', GetBucketAclCommand),
    ];
    expect(aclCalls.map((c) => (c.args[0].input as { Bucket: string }).Bucket).sort()).toEqual([
      'acme-cloudtrail-logs',
      'acme-customer-exports',
      'acme-eu-archive',
      'acme-public-assets',
    ]);
    // Per-bucket calls go to the bucket's own region.
    expect(
      fake
        .calls(S3Client, 'eu-west-1', GetBucketAclCommand)
        .map((c) => (c.args[0].input as { Bucket: string }).Bucket),
    ).toEqual(['acme-eu-archive']);
  });

  it('maps IAM users, access keys, roles and the account summary as global resources', async () => {
    const inv = await connect(new FakeAws()).collect({});
    const { get, edge } = index(inv);

    const alice = get(`arn:aws:iam::${ACCOUNT}:user/alice`);
    expect(alice).toMatchObject({
      type: 'aws_iam_user',
      region: 'global',
      name: 'alice',
      tags: { team: 'platform' },
    });
    expect(alice.attributes).toMatchObject({
      password_enabled: true,
      mfa_active: false,
      attached_policy_arns: ['arn:aws:iam::aws:policy/AdministratorAccess'],
    });
    expect(get(`arn:aws:iam::${ACCOUNT}:user/service/deploy-bot`).attributes).toMatchObject({
      password_enabled: false,
    });

    const key = get(`arn:aws:iam::${ACCOUNT}:user/alice/accesskey/AKIAQX7EXAMPLEALICE1`);
    expect(key).toMatchObject({
      type: 'aws_iam_access_key',
      nativeId: 'AKIAQX7EXAMPLEALICE1',
      name: 'alice',
      region: 'global',
    });
    expect(key.attributes).toMatchObject({
      status: 'Active',
      create_date: '2025-04-15T08:00:00.000Z',
      access_key_last_used_date: '2025-10-30T21:14:00.000Z',
      access_key_last_used_service: 's3',
    });
    expect(edge(key.arn, alice.arn, 'member-of')).toBe(true);
    expect(
      get(`arn:aws:iam::${ACCOUNT}:user/service/deploy-bot/accesskey/AKIAQX7EXAMPLEDEPLY1`).attributes,
    ).toMatchObject({
      status: 'Inactive',
      access_key_last_used_date: null,
      access_key_last_used_service: null,
    });

    const role = get(`arn:aws:iam::${ACCOUNT}:role/web-instance-role`);
    expect(role.attributes).toMatchObject({
      assume_role_policy_document: {
        Statement: [expect.objectContaining({ Principal: { Service: 'ec2.amazonaws.com' } })],
      },
      attached_policies: [
        { policy_name: 'read-exports', policy_arn: `arn:aws:iam::${ACCOUNT}:policy/read-exports` },
      ],
      inline_policies: [
        {
          policy_name: 's3-read',
          policy_document: expect.objectContaining({
            Statement: [expect.objectContaining({ Action: ['s3:GetObject', 's3:ListBucket'] })],
          }),
        },
      ],
    });
    expect(get(`arn:aws:iam::${ACCOUNT}:policy/read-exports`).attributes.policy_document).toMatchObject({
      Statement: [{ Action: 's3:Get*', Resource: '*' }],
    });

    const account = get(`arn:aws:::${ACCOUNT}`);
    expect(account).toMatchObject({
      type: 'aws_account',
      nativeId: ACCOUNT,
      name: 'acme-prod',
      region: 'global',
    });
    expect(account.attributes).toMatchObject({
      account_id: ACCOUNT,
      account_aliases: ['acme-prod'],
      account_mfa_enabled: false,
      account_access_keys_present: false,
      ebs_encryption_by_default: { 'us-east-1': false },
    });
  });

  it('fans out over regions with no more requests in flight than the concurrency allows', async () => {
    const fake = new FakeAws(3);
    const progress: Array<[string, number, number | null]> = [];
    const inv = await connect(fake, { regions: ['us-east-1', 'eu-west-1'], concurrency: 2 }).collect({
      onProgress: (phase, done, total) => progress.push([phase, done, total]),
    });
    const { byArn, get, edge } = index(inv);

    expect(byArn.has(I.web1)).toBe(true);
    expect(get(I.eu)).toMatchObject({ region: 'eu-west-1', availabilityZone: 'eu-west-1a', sizeValue: 2 });
    expect(edge(ec2('eu-west-1', 'volume', 'vol-07e6d5c4b3a29c001'), I.eu, 'attached-to')).toBe(true);
    expect(edge(I.eu, ec2('eu-west-1', 'subnet', 'subnet-07e6d5c4b3a29a001'), 'member-of')).toBe(true);
    expect(fake.calls(EC2Client, 'eu-west-1', DescribeInstancesCommand)).toHaveLength(1);
    expect(get(`arn:aws:::${ACCOUNT}`).attributes.ebs_encryption_by_default).toEqual({
      'us-east-1': false,
      'eu-west-1': true,
    });

    expect(fake.maxInFlight).toBe(2); // concurrent, and never more than allowed

    const total = 6 + 2 * 10; // IAM in five parts, the S3 bucket list, ten per region
    expect(progress).toHaveLength(total);
    expect(progress.map(([, done]) => done)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(progress.every(([, , t]) => t === total)).toBe(true);
    expect(progress.map(([phase]) => phase)).toEqual(
      expect.arrayContaining(['ec2:us-east-1', 'ec2:eu-west-1', 'iam:global', 's3:*', 'rds:eu-west-1']),
    );
  });

  it('keeps a resource whose details may not be read, saying which calls were denied', async () => {
    const fake = new FakeAws();
    fake
      .stub(DynamoDBClient, 'us-east-1')
      .on(DescribeTableCommand)
      .rejects(awsError('AccessDeniedException', 'not authorized to perform: dynamodb:DescribeTable', 400));
    const inv = await connect(fake).collect({});
    const table = index(inv).get(`arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/orders`);
    expect(table.tags).toEqual({ service: 'orders', team: 'payments' });
    expect(table.attributes).toMatchObject({
      name: 'orders',
      billing_mode: null,
      unreadable: ['DescribeTable'],
    });
  });

  it('refuses credentials that reach another account', async () => {
    const err = await connect(new FakeAws(), { accountId: '210987654321' })
      .collect({})
      .catch((e: unknown) => e);
    expect(String(err)).toContain('reach account 123456789012, not 210987654321');
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('sync cancelled'));
    await expect(connect(new FakeAws()).collect({ signal: controller.signal })).rejects.toThrow(
      'sync cancelled',
    );
  });
});

describe('AWS shapes', () => {
  it('snake-cases AWS member names as Steampipe does', () => {
    expect(snakeKey('DBInstanceIdentifier')).toBe('db_instance_identifier');
    expect(snakeKey('MultiAZ')).toBe('multi_az');
    expect(snakeKey('Ipv6CidrBlock')).toBe('ipv6_cidr_block');
    expect(snakeKey('HttpPutResponseHopLimit')).toBe('http_put_response_hop_limit');
    expect(snakeKey('SSEAlgorithm')).toBe('sse_algorithm');
    expect(snakeKey('logGroupName')).toBe('log_group_name');
  });

  it('flattens IpPermissions into one rule per source', () => {
    const rules = flattenRules('ingress', [
      {
        IpProtocol: 'tcp',
        FromPort: 0,
        ToPort: 65535,
        IpRanges: [{ CidrIp: '0.0.0.0/0' }, { CidrIp: '10.0.0.0/8' }],
        UserIdGroupPairs: [{ GroupId: 'sg-1' }],
      },
      { IpProtocol: '-1', FromPort: -1, ToPort: -1, Ipv6Ranges: [{ CidrIpv6: '::/0' }] },
    ]);
    expect(
      rules.map((r) => [r.from_port, r.to_port, r.cidr_ipv4 ?? r.cidr_ipv6 ?? r.referenced_group_id]),
    ).toEqual([
      [0, 65535, '0.0.0.0/0'],
      [0, 65535, '10.0.0.0/8'],
      [0, 65535, 'sg-1'],
      [null, null, '::/0'],
    ]);
  });

  it('reads the stop time out of StateTransitionReason', () => {
    expect(stateTransitionTime('User initiated (2025-09-01 18:04:00 GMT)')).toBe('2025-09-01T18:04:00.000Z');
    expect(stateTransitionTime('')).toBeNull();
  });
});
