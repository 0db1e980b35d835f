import type { EdgeKind, InventoryEdge, InventoryEvent, InventoryResource, ResourceType } from '../model';
import { accountId, hexId, Random } from './random';

export type DemoSize = 'small' | 'medium' | 'large' | 'xlarge';

/** Every demo size, smallest first. */
export const DEMO_SIZES: readonly DemoSize[] = ['small', 'medium', 'large', 'xlarge'];

/** A demo environment: a pure function of these, so the same spec always gives the same inventory. */
export interface DemoSpec {
  seed: number;
  size: DemoSize;
  /** The environment's day 0 (YYYY-MM-DD, UTC). */
  epoch: string;
  /** Days since the epoch; negative days describe the environment's past (backfilled snapshots). */
  day: number;
  /** Mutating AWS CLI commands applied by `demo exec`, each on the day it was run. */
  commands: Array<{ day: number; command: string }>;
}

/**
 * Clean application stacks added beside the seeded defects: about 15 resources each. `xlarge` (about
 * 1,000,000 resources, a whale tenant) spreads them over more networks (filler.ts, NETWORKS_PER_PLACE).
 */
export const FILLER_SERVICES: Record<DemoSize, number> = {
  small: 6,
  medium: 320,
  large: 6600,
  xlarge: 65_000,
};

const DAY = 86_400_000;

export interface DemoWorld {
  spec: DemoSpec;
  observedAt: Date;
  resources: Map<string, InventoryResource>;
  edges: Map<string, InventoryEdge>;
  events: InventoryEvent[];
  /** nativeId → arn, for commands that name resources as the AWS CLI does. */
  byNativeId: Map<string, string>;
  accounts: { prod: string; staging: string; shared: string };
  at(day: number, hour?: number, minute?: number): Date;
}

export interface ResourceInput {
  type: ResourceType;
  nativeId: string;
  arn: string;
  account: string;
  region: string;
  az?: string | null;
  name?: string | null;
  tags?: Record<string, string>;
  attributes: Record<string, unknown>;
  size?: [number, 'GiB' | 'vCPU' | 'IOPS'] | null;
}

const VCPU: Record<string, number> = {
  't3.micro': 2,
  't3.medium': 2,
  't3.large': 2,
  't2.medium': 2,
  'm5.large': 2,
  'm5.xlarge': 4,
  'm5.4xlarge': 16,
};

/** Builds the world: organization, seeded defects, filler stacks, then everything that happened by `day`. */
export class WorldBuilder implements DemoWorld {
  readonly resources = new Map<string, InventoryResource>();
  readonly edges = new Map<string, InventoryEdge>();
  readonly events: InventoryEvent[] = [];
  readonly byNativeId = new Map<string, string>();
  /** arn → keys of its edges, so removing a resource does not scan every edge. */
  private readonly edgesByArn = new Map<string, Set<string>>();
  readonly accounts: DemoWorld['accounts'];
  readonly observedAt: Date;
  private readonly epochMs: number;
  /**
   * Who owns what is added now: null for the organization (seeded defects, networks), a filler stack's
   * number while that stack is built or churned. Recorded only for a world built in parts (collectWorld
   * of a whale), which emits each resource, edge and event from the part whose stack owns it.
   */
  owner: number | null = null;
  readonly owners: { resources: Map<string, number | null>; edges: Map<string, number | null> } | null;
  readonly eventOwners: Array<number | null> = [];

  constructor(
    readonly spec: DemoSpec,
    options: { trackOwners?: boolean } = {},
  ) {
    this.owners = options.trackOwners ? { resources: new Map(), edges: new Map() } : null;
    this.epochMs = Date.parse(`${spec.epoch}T00:00:00Z`);
    this.observedAt = this.at(spec.day);
    this.accounts = {
      prod: accountId(spec.seed, 'prod'),
      staging: accountId(spec.seed, 'staging'),
      shared: accountId(spec.seed, 'shared-services'),
    };
  }

  at(day: number, hour = 0, minute = 0): Date {
    return new Date(this.epochMs + day * DAY + hour * 3_600_000 + minute * 60_000);
  }

  iso(day: number, hour = 0, minute = 0): string {
    return this.at(day, hour, minute).toISOString();
  }

  id(prefix: string, key: string, length = 17): string {
    return `${prefix}-${hexId(this.spec.seed, key, length)}`;
  }

  add(input: ResourceInput): InventoryResource {
    const r: InventoryResource = {
      type: input.type,
      arn: input.arn,
      nativeId: input.nativeId,
      accountId: input.account,
      region: input.region,
      availabilityZone: input.az ?? null,
      name: input.name ?? input.tags?.Name ?? null,
      tags: input.tags ?? {},
      attributes: input.attributes,
      sizeValue: input.size?.[0] ?? null,
      sizeUnit: input.size?.[1] ?? null,
    };
    this.resources.set(r.arn, r);
    this.byNativeId.set(r.nativeId, r.arn);
    this.owners?.resources.set(r.arn, this.owner);
    return r;
  }

  remove(arn: string): void {
    const r = this.resources.get(arn);
    if (!r) return;
    this.resources.delete(arn);
    this.byNativeId.delete(r.nativeId);
    for (const key of this.edgesByArn.get(arn) ?? []) {
      const e = this.edges.get(key);
      if (!e) continue;
      this.edges.delete(key);
      this.edgesByArn.get(e.from === arn ? e.to : e.from)?.delete(key);
    }
    this.edgesByArn.delete(arn);
  }

  link(from: string, to: string, kind: EdgeKind, source = 'config', confidence = 1): void {
    const key = `${from}|${to}|${kind}`;
    this.edges.set(key, { from, to, kind, source, confidence });
    this.owners?.edges.set(key, this.owner);
    for (const arn of [from, to]) {
      let keys = this.edgesByArn.get(arn);
      if (!keys) this.edgesByArn.set(arn, (keys = new Set()));
      keys.add(key);
    }
  }

  unlink(from: string, to: string, kind: EdgeKind): void {
    const key = `${from}|${to}|${kind}`;
    this.edges.delete(key);
    this.edgesByArn.get(from)?.delete(key);
    this.edgesByArn.get(to)?.delete(key);
  }

  event(
    e: Omit<InventoryEvent, 'sourceIp' | 'fingerprint' | 'severity' | 'service'> & Partial<InventoryEvent>,
  ): void {
    this.events.push({ sourceIp: null, fingerprint: null, severity: null, service: null, ...e });
    if (this.owners) this.eventOwners.push(this.owner);
  }

  get(nativeId: string): InventoryResource | undefined {
    const arn = this.byNativeId.get(nativeId);
    return arn ? this.resources.get(arn) : undefined;
  }

  // ----- ARN helpers, as AWS writes them -----
  ec2Arn(account: string, region: string, kind: string, id: string) {
    return `arn:aws:ec2:${region}:${account}:${kind}/${id}`;
  }

  // ----- resource builders -----

  vpc(account: string, region: string, key: string, cidr: string, tags: Record<string, string>) {
    const id = this.id('vpc', key);
    return this.add({
      type: 'aws_vpc',
      nativeId: id,
      arn: this.ec2Arn(account, region, 'vpc', id),
      account,
      region,
      tags,
      attributes: { vpc_id: id, cidr_block: cidr, state: 'available', is_default: false, owner_id: account },
    });
  }

  subnet(
    vpc: InventoryResource,
    key: string,
    az: string,
    cidr: string,
    isPublic: boolean,
    tags: Record<string, string>,
  ) {
    const id = this.id('subnet', key);
    const r = this.add({
      type: 'aws_vpc_subnet',
      nativeId: id,
      arn: this.ec2Arn(vpc.accountId, vpc.region, 'subnet', id),
      account: vpc.accountId,
      region: vpc.region,
      az,
      tags,
      attributes: {
        subnet_id: id,
        vpc_id: vpc.nativeId,
        cidr_block: cidr,
        availability_zone: az,
        map_public_ip_on_launch: isPublic,
        state: 'available',
        route_table_id: null,
      },
    });
    this.link(r.arn, vpc.arn, 'member-of');
    return r;
  }

  securityGroup(
    vpc: InventoryResource,
    key: string,
    name: string,
    rules: Array<{
      type?: 'ingress' | 'egress';
      ip_protocol: string;
      from_port: number | null;
      to_port: number | null;
      cidr_ipv4?: string | null;
      cidr_ipv6?: string | null;
      referenced_group_id?: string | null;
    }>,
    tags: Record<string, string> = {},
  ) {
    const id = this.id('sg', key);
    return this.add({
      type: 'aws_vpc_security_group',
      nativeId: id,
      arn: this.ec2Arn(vpc.accountId, vpc.region, 'security-group', id),
      account: vpc.accountId,
      region: vpc.region,
      name,
      tags: { Name: name, ...tags },
      attributes: {
        group_id: id,
        group_name: name,
        vpc_id: vpc.nativeId,
        description: `${name} security group`,
        rules: [
          ...rules.map((r) => ({
            type: r.type ?? 'ingress',
            ip_protocol: r.ip_protocol,
            from_port: r.from_port,
            to_port: r.to_port,
            cidr_ipv4: r.cidr_ipv4 ?? null,
            cidr_ipv6: r.cidr_ipv6 ?? null,
            referenced_group_id: r.referenced_group_id ?? null,
          })),
          {
            type: 'egress',
            ip_protocol: '-1',
            from_port: null,
            to_port: null,
            cidr_ipv4: '0.0.0.0/0',
            cidr_ipv6: null,
            referenced_group_id: null,
          },
        ],
      },
    });
  }

  instance(o: {
    key: string;
    subnet: InventoryResource;
    name: string;
    instanceType: string;
    sgs: InventoryResource[];
    tags: Record<string, string>;
    launchDay: number;
    state?: 'running' | 'stopped';
    stoppedDay?: number;
    imdsV2?: boolean;
    publicIp?: boolean;
    role?: InventoryResource | null;
    platform?: 'Linux/UNIX' | 'windows';
    rootVolume: { type: string; size: number; encrypted?: boolean; iops?: number; throughput?: number };
    launchTemplate?: InventoryResource;
  }) {
    const id = this.id('i', o.key);
    const region = o.subnet.region;
    const account = o.subnet.accountId;
    const az = String(o.subnet.attributes.availability_zone);
    const volumeId = this.id('vol', `${o.key}:root`);
    const state = o.state ?? 'running';
    const profileArn = o.role ? `arn:aws:iam::${account}:instance-profile/${String(o.role.nativeId)}` : null;
    const inst = this.add({
      type: 'aws_ec2_instance',
      nativeId: id,
      arn: this.ec2Arn(account, region, 'instance', id),
      account,
      region,
      az,
      name: o.name,
      tags: { Name: o.name, ...o.tags },
      size: [VCPU[o.instanceType] ?? 2, 'vCPU'],
      attributes: {
        instance_id: id,
        instance_type: o.instanceType,
        instance_state: state,
        launch_time: this.iso(o.launchDay, 9, 12),
        state_transition_time: state === 'stopped' ? this.iso(o.stoppedDay ?? o.launchDay) : null,
        availability_zone: az,
        subnet_id: o.subnet.nativeId,
        vpc_id: o.subnet.attributes.vpc_id,
        security_groups: o.sgs.map((sg) => ({ group_id: sg.nativeId, group_name: sg.attributes.group_name })),
        iam_instance_profile_arn: profileArn,
        public_ip_address:
          o.publicIp && state === 'running'
            ? `54.${this.octet(o.key, 1)}.${this.octet(o.key, 2)}.${this.octet(o.key, 3)}`
            : null,
        private_ip_address: `10.${this.octet(o.key, 4)}.${this.octet(o.key, 5)}.${this.octet(o.key, 6)}`,
        metadata_options: {
          http_tokens: o.imdsV2 === false ? 'optional' : 'required',
          http_endpoint: 'enabled',
        },
        // As EC2 describes it: Platform only for Windows; the readable text in PlatformDetails.
        platform: o.platform === 'windows' ? 'windows' : null,
        platform_details: o.platform === 'windows' ? 'Windows' : 'Linux/UNIX',
        architecture: 'x86_64',
        ebs_optimized: true,
        image_id: this.id('ami', `${o.tags.service ?? o.name}:ami`),
        launch_template: o.launchTemplate
          ? {
              launch_template_id: o.launchTemplate.nativeId,
              launch_template_name: o.launchTemplate.name,
              version: '3',
            }
          : null,
        block_device_mappings: [{ device_name: '/dev/xvda', volume_id: volumeId }],
      },
    });
    this.link(inst.arn, o.subnet.arn, 'member-of');
    for (const sg of o.sgs) this.link(inst.arn, sg.arn, 'protected-by');
    if (o.role) this.link(inst.arn, o.role.arn, 'uses-role');
    this.volume({
      key: `${o.key}:root`,
      account,
      region,
      az,
      type: o.rootVolume.type,
      size: o.rootVolume.size,
      iops: o.rootVolume.iops,
      throughput: o.rootVolume.throughput,
      encrypted: o.rootVolume.encrypted ?? true,
      createDay: o.launchDay,
      attachedTo: inst,
      tags: { Name: `${o.name}-root`, ...o.tags },
    });
    return inst;
  }

  volume(o: {
    key: string;
    account: string;
    region: string;
    az: string;
    type: string;
    size: number;
    iops?: number | undefined;
    throughput?: number | undefined;
    encrypted: boolean;
    createDay: number;
    attachedTo?: InventoryResource | null;
    device?: string;
    tags: Record<string, string>;
  }) {
    const id = this.id('vol', o.key);
    const iops =
      o.iops ??
      (o.type === 'gp2' ? Math.min(16000, Math.max(100, o.size * 3)) : o.type === 'gp3' ? 3000 : null);
    const throughput = o.throughput ?? (o.type === 'gp3' ? 125 : null);
    const vol = this.add({
      type: 'aws_ebs_volume',
      nativeId: id,
      arn: this.ec2Arn(o.account, o.region, 'volume', id),
      account: o.account,
      region: o.region,
      az: o.az,
      tags: o.tags,
      size: [o.size, 'GiB'],
      attributes: {
        volume_id: id,
        volume_type: o.type,
        size: o.size,
        iops,
        throughput,
        encrypted: o.encrypted,
        kms_key_id: o.encrypted ? `arn:aws:kms:${o.region}:${o.account}:alias/aws/ebs` : null,
        state: o.attachedTo ? 'in-use' : 'available',
        attachments: o.attachedTo
          ? [
              {
                instance_id: o.attachedTo.nativeId,
                device: o.device ?? '/dev/xvda',
                state: 'attached',
                delete_on_termination: !o.device,
              },
            ]
          : [],
        create_time: this.iso(o.createDay, 9, 13),
        snapshot_id: null,
        availability_zone: o.az,
      },
    });
    if (o.attachedTo) this.link(vol.arn, o.attachedTo.arn, 'attached-to');
    return vol;
  }

  snapshot(o: {
    key: string;
    account: string;
    region: string;
    volumeId: string;
    size: number;
    startDay: number;
    encrypted?: boolean;
    tags?: Record<string, string>;
  }) {
    const id = this.id('snap', o.key);
    const snap = this.add({
      type: 'aws_ebs_snapshot',
      nativeId: id,
      arn: `arn:aws:ec2:${o.region}::snapshot/${id}`,
      account: o.account,
      region: o.region,
      tags: o.tags ?? {},
      size: [o.size, 'GiB'],
      attributes: {
        snapshot_id: id,
        volume_id: o.volumeId,
        volume_size: o.size,
        start_time: this.iso(o.startDay),
        encrypted: o.encrypted ?? true,
        state: 'completed',
        owner_id: o.account,
        description: `Created by backup policy for ${o.volumeId}`,
        create_volume_permissions: [],
      },
    });
    const vol = this.resources.get(this.byNativeId.get(o.volumeId) ?? '');
    if (vol) this.link(snap.arn, vol.arn, 'depends-on');
    return snap;
  }

  alarm(o: {
    account: string;
    region: string;
    name: string;
    namespace: string;
    metric: string;
    dimension: [string, string];
    target: InventoryResource;
    actions: boolean;
  }) {
    const topic = `arn:aws:sns:${o.region}:${o.account}:ops-alerts`;
    const r = this.add({
      type: 'aws_cloudwatch_alarm',
      nativeId: o.name,
      arn: `arn:aws:cloudwatch:${o.region}:${o.account}:alarm:${o.name}`,
      account: o.account,
      region: o.region,
      name: o.name,
      attributes: {
        alarm_name: o.name,
        namespace: o.namespace,
        metric_name: o.metric,
        dimensions: [{ name: o.dimension[0], value: o.dimension[1] }],
        alarm_actions: o.actions ? [topic] : [],
        ok_actions: o.actions ? [topic] : [],
        insufficient_data_actions: [],
        state_value: 'OK',
        comparison_operator: 'GreaterThanThreshold',
        threshold: 80,
        period: 300,
        evaluation_periods: 3,
        statistic: 'Average',
      },
    });
    this.link(r.arn, o.target.arn, 'monitors');
    return r;
  }

  logGroup(
    account: string,
    region: string,
    name: string,
    retention: number | null,
    storedGb: number,
    tags: Record<string, string> = {},
  ) {
    return this.add({
      type: 'aws_cloudwatch_log_group',
      nativeId: name,
      arn: `arn:aws:logs:${region}:${account}:log-group:${name}`,
      account,
      region,
      name,
      tags,
      attributes: {
        name,
        retention_in_days: retention,
        stored_bytes: Math.round(storedGb * 1024 ** 3),
        creation_time: this.iso(-300),
      },
    });
  }

  private octet(key: string, n: number): number {
    return (parseInt(hexId(this.spec.seed, `${key}:ip:${n}`, 2), 16) % 250) + 2;
  }
}

export function newRandom(spec: DemoSpec, stream: string) {
  return new Random(spec.seed, stream);
}
