import type { EdgeKind, InventoryResource, ResourceType } from '../model';
import {
  autoScalingGroup,
  bucket,
  eip,
  launchTemplate,
  loadBalancer,
  natGateway,
  rds,
  rdsSnapshot,
  role,
  route53,
  routeTable,
} from './builders';
import { hexId } from './random';
import { SEEDED_HANDLES, SEEDED_NAMES, SEEDED_SECTIONS, SEEDED_SERVICES } from './seeded-defects';
import type { WorldBuilder } from './world';

/**
 * The seeded organization as data (seeded-defects.ts) and the builder that interprets it.
 *
 * Glossary
 * - section: one part of the estate (the prod network, checkout, the bastion, …) with the records that
 *   build it, in order. Sections are built in the order they are listed and records in the order they
 *   are written: that order is the order of the inventory's rows, pinned by golden.test.ts.
 * - record: one resource (or a fleet of alike instances, or an edge) to add: its `kind` names the
 *   builder (world.ts, builders.ts) that makes it; the other fields are that builder's inputs.
 * - ref: the name a record gives what it builds (`ref: 'sg-bastion'`) so later records can point at it
 *   (`sgs: ['sg-bastion']`). A subnet may also join a `group` (`prod-private`), a ref to the list.
 * - key: the stable string a resource's id is hashed from with the seed (`w.id('i', key)`): the same key
 *   gives the same id in every size, which is what keeps the seeded defects on the same ids.
 * - defect: on a record that plants one, the finding it should trip and why it is there (domain-notes
 *   §6.3); records without one are clean context the defects need (a network, an ASG, an alarm).
 * - account: `prod`, `staging` or `shared`, the organization's accounts (w.accounts).
 * - template: a string with `<prod>`, `<staging>`, `<shared>` (an account id) or `<name>` of
 *   SEEDED_NAMES (a name that carries the seed, e.g. a bucket's); resolved in every record before it is
 *   built, which also copies the record so that the built world never shares an object with the tables.
 * - handle: a Seeded field (below) and the ref it is read from, for the timeline, metrics and tests.
 *
 * The state built here is the environment as of day -7; the timeline (timeline.ts) applies what happened
 * after, and signals.ts gives the handles their metrics and costs.
 */

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

export type AccountKey = 'prod' | 'staging' | 'shared';
/** The name of a record's result (see the glossary). */
export type Ref = string;
type Tags = Record<string, string>;
/** A time as [day, hour, minute] since the epoch. */
type At = [number, number, number];

export interface SecurityGroupRule {
  ip_protocol: string;
  from_port: number | null;
  to_port: number | null;
  cidr_ipv4?: string;
  cidr_ipv6?: string;
  /** The ref of the security group the rule admits. */
  from_group?: Ref;
}

/** What an instance is, besides where it runs: shared by `instance` and `fleet`. */
interface InstanceShape {
  instanceType: string;
  sgs: Ref[];
  tags: Tags;
  state?: 'running' | 'stopped';
  stoppedDay?: number;
  imdsV2?: boolean;
  publicIp?: boolean;
  role?: Ref;
  platform?: 'windows';
  root: { type: string; size: number };
  launchTemplate?: Ref;
}

type Located = { account: AccountKey; region: string };

/** One thing to build; `kind` says which builder. */
export type SeededRecord = { defect?: string } & (
  | (Located & { kind: 'account'; name: string; rootMfa: boolean; multiRegionTrail: boolean })
  | (Located & { kind: 'vpc'; ref: Ref; key: string; cidr: string; tags: Tags })
  | {
      kind: 'subnet';
      ref: Ref;
      group: Ref;
      vpc: Ref;
      key: string;
      az: string;
      cidr: string;
      public: boolean;
      tags: Tags;
    }
  | { kind: 'internet-gateway'; ref: Ref; vpc: Ref; key: string; tags: Tags }
  | (Located & { kind: 'eip'; ref?: Ref; key: string; day: number; tags: Tags })
  | {
      kind: 'nat-gateway';
      ref: Ref;
      subnet: Ref;
      key: string;
      eip: Ref;
      day: number;
      tags: Tags;
      /** Keys of the EIP's association and network interface ids, set once the gateway holds it. */
      association: { key: string; networkInterfaceKey?: string };
    }
  | { kind: 'route-table'; vpc: Ref; key: string; subnets: Ref[]; via: Ref; tags: Tags }
  | { kind: 'security-group'; ref: Ref; vpc: Ref; key: string; name: string; rules: SecurityGroupRule[] }
  | (Located & { kind: 'role'; ref: Ref; name: string; statements: Array<Record<string, unknown>> })
  | (Located & {
      kind: 'iam-user';
      name: string;
      createDay: number;
      mfa: boolean;
      passwordLastUsed: At;
      policies: string[];
    })
  | (Located & { kind: 'access-key'; user: string; createDay: number; lastUsed: At })
  | (Located & {
      kind: 'launch-template';
      ref: Ref;
      name: string;
      instanceType: string;
      volume: { type: string; size: number };
    })
  | (InstanceShape & {
      kind: 'instance';
      ref?: Ref;
      key: string;
      name: string;
      subnet: Ref;
      launchDay: number;
    })
  | (InstanceShape & {
      kind: 'fleet';
      ref: Ref;
      count: number;
      /** Instance i has key `${key}:${i}`, subnet subnets[i % length], launch day firstLaunchDay + i. */
      key: string;
      /** `{n}` is i + 1, `{nn}` the same on two digits. */
      name: string;
      subnets: Ref[];
      firstLaunchDay: number;
    })
  | (Located & {
      kind: 'load-balancer';
      ref: Ref;
      /** The ref of its target group, when it has targets. */
      targetGroup?: Ref;
      name: string;
      subnets: Ref[];
      sgs: Ref[];
      targets: Ref | null;
      tags: Tags;
      deletionProtection: boolean;
    })
  | (Located & {
      kind: 'asg';
      ref: Ref;
      name: string;
      subnets: Ref[];
      instances: Ref;
      capacity: { min: number; max: number; desired: number };
      launchTemplate: Ref | null;
      targetGroups: Ref[];
      tags: Tags;
    })
  | (Located & {
      kind: 'alarm';
      name: string;
      namespace: string;
      metric: string;
      /** The dimension's name; its value is the target's native id. */
      dimension: string;
      target: Ref;
      notifies: boolean;
    })
  | (Located & {
      kind: 'volume';
      ref?: Ref;
      key: string;
      az: string;
      type: string;
      size: number;
      iops?: number;
      encrypted: boolean;
      createDay: number;
      attachedTo?: Ref;
      device?: string;
      tags: Tags;
    })
  | (Located & {
      kind: 'snapshot';
      key: string;
      /** The key of the volume it was taken from (that volume may no longer exist). */
      volumeKey: string;
      size: number;
      startDay: number;
      encrypted?: boolean;
      tags: Tags;
    })
  | (Located & {
      kind: 'log-group';
      name: string;
      retentionDays: number | null;
      storedGb: number;
      tags?: Tags;
    })
  | (Located & {
      kind: 'rds';
      ref: Ref;
      id: string;
      class: string;
      multi_az: boolean;
      backup_retention_period: number;
      deletion_protection: boolean;
      publicly_accessible: boolean;
      storage_encrypted: boolean;
      allocated_storage: number;
      az: string;
      sgs: Ref[];
      subnetGroup: string;
      tags: Tags;
      createDay: number;
    })
  | (Located & { kind: 'rds-snapshot'; id: string; sourceDb: string; gb: number; day: number })
  | (Located & {
      kind: 'bucket';
      ref?: Ref;
      /** A template: a seeded name (SEEDED_NAMES). */
      name: string;
      publicAcl: boolean;
      blockAll: boolean;
      policy: Record<string, unknown> | null;
      tags: Tags;
      sizeGb: number;
      lifecycle?: boolean;
    })
  /** A resource whose attributes are all data: written as AWS describes it, `arn` a template. */
  | (Located & {
      kind: 'resource';
      ref: Ref;
      type: ResourceType;
      nativeId: string;
      arn: string;
      name: string;
      tags: Tags;
      attributes: Record<string, unknown>;
    })
  | { kind: 'dns-record'; account: AccountKey; name: string; target: Ref }
  /** An edge from every resource of `from` (one, or a fleet) to `to`. */
  | { kind: 'link'; from: Ref; to: Ref; edge: EdgeKind; source: string; confidence: number }
);

/** A part of the estate: the records that build it, and what it is there for. */
export interface SeededSection {
  title: string;
  records: SeededRecord[];
}

/**
 * The seeded environment: a prod account (us-east-1, with a DR footprint in us-west-2), staging and
 * shared services, and every defect of the reference list (domain-notes §6.3), each on a named
 * resource with a stable id: the tables of seeded-defects.ts, built in order.
 */
export function buildSeeded(w: WorldBuilder): Seeded {
  const refs = new Map<Ref, InventoryResource | InventoryResource[]>();
  const names = seededNames(w);
  for (const section of SEEDED_SECTIONS)
    for (const record of section.records) buildRecord(w, resolve(record, names), refs);

  const one = (ref: Ref) => only(refs, ref);
  const all = (ref: Ref) => every(refs, ref);
  const h = SEEDED_HANDLES;
  return {
    prodVpc: one(h.prodVpc),
    privateSubnets: all(h.privateSubnets),
    publicSubnets: all(h.publicSubnets),
    natProd: one(h.natProd),
    natIdle: one(h.natIdle),
    sgWeb: one(h.sgWeb),
    checkoutAlb: one(h.checkoutAlb),
    checkoutTg: one(h.checkoutTg),
    paymentsDb: one(h.paymentsDb),
    reportingDb: one(h.reportingDb),
    reportingWorker: one(h.reportingWorker),
    tmpMigrationVolume: one(h.tmpMigrationVolume),
    sensitiveBucket: one(h.sensitiveBucket),
    services: [...SEEDED_SERVICES],
  };
}

/** The values of a record's templates: account ids and seeded names. */
function seededNames(w: WorldBuilder): Map<string, string> {
  const names = new Map<string, string>(Object.entries(w.accounts));
  for (const [name, [prefix, key]] of Object.entries(SEEDED_NAMES))
    names.set(name, `${prefix}-${hexId(w.spec.seed, key, 6)}`);
  return names;
}

/** A copy of a record with its templates resolved (see the glossary). */
function resolve<T>(value: T, names: Map<string, string>): T {
  if (typeof value === 'string')
    return value.replace(/<([a-z-]+)>/g, (token, name: string) => names.get(name) ?? token) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => resolve(v, names)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, names)])) as T;
  return value;
}

function only(refs: Map<Ref, InventoryResource | InventoryResource[]>, ref: Ref): InventoryResource {
  const r = refs.get(ref);
  if (!r || Array.isArray(r)) throw new Error(`seeded: ${ref} is not one resource built before`);
  return r;
}

function every(refs: Map<Ref, InventoryResource | InventoryResource[]>, ref: Ref): InventoryResource[] {
  const r = refs.get(ref);
  if (!r) throw new Error(`seeded: ${ref} is not built before`);
  return Array.isArray(r) ? r : [r];
}

function buildRecord(
  w: WorldBuilder,
  rec: SeededRecord,
  refs: Map<Ref, InventoryResource | InventoryResource[]>,
): void {
  const one = (ref: Ref) => only(refs, ref);
  const all = (ref: Ref) => every(refs, ref);
  const keep = (ref: Ref | undefined, r: InventoryResource) => {
    if (ref) refs.set(ref, r);
    return r;
  };
  const seed = w.spec.seed;
  const account = 'account' in rec ? w.accounts[rec.account] : '';
  switch (rec.kind) {
    case 'account': {
      w.add({
        type: 'aws_account',
        nativeId: account,
        arn: `arn:aws:iam::${account}:root`,
        account,
        region: 'global',
        name: rec.name,
        attributes: {
          account_id: account,
          account_aliases: [rec.name],
          organization_id: `o-${hexId(seed, 'org', 10)}`,
          account_mfa_enabled: rec.rootMfa,
          account_access_keys_present: 0,
        },
      });
      const trailName = `${rec.name}-trail`;
      w.add({
        type: 'aws_cloudtrail_trail',
        nativeId: trailName,
        arn: `arn:aws:cloudtrail:${rec.region}:${account}:trail/${trailName}`,
        account,
        region: rec.region,
        name: trailName,
        attributes: {
          name: trailName,
          home_region: rec.region,
          is_multi_region_trail: rec.multiRegionTrail,
          is_logging: true,
          is_organization_trail: false,
          s3_bucket_name: `${rec.name}-cloudtrail-${hexId(seed, `trail:${account}`, 6)}`,
          log_file_validation_enabled: true,
        },
      });
      return;
    }
    case 'vpc':
      keep(rec.ref, w.vpc(account, rec.region, rec.key, rec.cidr, rec.tags));
      return;
    case 'subnet': {
      const s = keep(rec.ref, w.subnet(one(rec.vpc), rec.key, rec.az, rec.cidr, rec.public, rec.tags));
      refs.set(rec.group, [...((refs.get(rec.group) as InventoryResource[] | undefined) ?? []), s]);
      return;
    }
    case 'internet-gateway': {
      const vpc = one(rec.vpc);
      const id = w.id('igw', rec.key);
      keep(
        rec.ref,
        w.add({
          type: 'aws_vpc_internet_gateway',
          nativeId: id,
          arn: w.ec2Arn(vpc.accountId, vpc.region, 'internet-gateway', id),
          account: vpc.accountId,
          region: vpc.region,
          tags: rec.tags,
          attributes: {
            internet_gateway_id: id,
            attachments: [{ vpc_id: vpc.nativeId, state: 'available' }],
          },
        }),
      );
      return;
    }
    case 'eip':
      keep(rec.ref, eip(w, account, rec.region, rec.key, rec.day, rec.tags));
      return;
    case 'nat-gateway': {
      const address = one(rec.eip);
      keep(rec.ref, natGateway(w, one(rec.subnet), rec.key, address, rec.day, rec.tags));
      address.attributes.association_id = `eipassoc-${hexId(seed, rec.association.key, 17)}`;
      if (rec.association.networkInterfaceKey)
        address.attributes.network_interface_id = `eni-${hexId(seed, rec.association.networkInterfaceKey, 17)}`;
      return;
    }
    case 'route-table': {
      const via = one(rec.via);
      const route =
        via.type === 'aws_vpc_nat_gateway' ? { nat_gateway_id: via.nativeId } : { gateway_id: via.nativeId };
      routeTable(w, one(rec.vpc), rec.key, rec.subnets.flatMap(all), route, via, rec.tags);
      return;
    }
    case 'security-group': {
      const rules = rec.rules.map(({ from_group, ...rule }) =>
        from_group ? { ...rule, referenced_group_id: one(from_group).nativeId } : rule,
      );
      keep(rec.ref, w.securityGroup(one(rec.vpc), rec.key, rec.name, rules));
      return;
    }
    case 'role':
      keep(rec.ref, role(w, account, rec.name, rec.statements));
      return;
    case 'iam-user':
      w.add({
        type: 'aws_iam_user',
        nativeId: rec.name,
        arn: `arn:aws:iam::${account}:user/${rec.name}`,
        account,
        region: 'global',
        name: rec.name,
        attributes: {
          name: rec.name,
          user_id: `AIDA${hexId(seed, `user:${rec.name}`, 16).toUpperCase()}`,
          create_date: w.iso(rec.createDay),
          password_enabled: true,
          mfa_enabled: rec.mfa,
          password_last_used: w.iso(...rec.passwordLastUsed),
          attached_policy_arns: rec.policies,
        },
      });
      return;
    case 'access-key': {
      const id = `AKIA${hexId(seed, `key:${rec.user}`, 16).toUpperCase()}`;
      const arn = `arn:aws:iam::${account}:user/${rec.user}/accesskey/${id}`;
      w.add({
        type: 'aws_iam_access_key',
        nativeId: id,
        arn,
        account,
        region: 'global',
        name: rec.user,
        attributes: {
          access_key_id: id,
          user_name: rec.user,
          status: 'Active',
          create_date: w.iso(rec.createDay),
          access_key_last_used_date: w.iso(...rec.lastUsed),
        },
      });
      w.link(arn, `arn:aws:iam::${account}:user/${rec.user}`, 'member-of');
      return;
    }
    case 'launch-template':
      keep(
        rec.ref,
        launchTemplate(w, account, rec.region, rec.name, rec.instanceType, rec.volume.type, rec.volume.size),
      );
      return;
    case 'instance':
      keep(rec.ref, buildInstance(w, rec, rec.key, rec.name, one(rec.subnet), rec.launchDay, refs));
      return;
    case 'fleet': {
      const subnets = rec.subnets.flatMap(all);
      const fleet = Array.from({ length: rec.count }, (_, i) =>
        buildInstance(
          w,
          rec,
          `${rec.key}:${i}`,
          rec.name.replace('{nn}', String(i + 1).padStart(2, '0')).replace('{n}', String(i + 1)),
          subnets[i % subnets.length]!,
          rec.firstLaunchDay + i,
          refs,
        ),
      );
      refs.set(rec.ref, fleet);
      return;
    }
    case 'load-balancer': {
      const { alb, tg } = loadBalancer(
        w,
        account,
        rec.region,
        rec.name,
        rec.subnets.flatMap(all),
        rec.sgs.map(one),
        rec.targets === null ? null : all(rec.targets),
        rec.tags,
        rec.deletionProtection,
      );
      keep(rec.ref, alb);
      if (rec.targetGroup) keep(rec.targetGroup, tg);
      return;
    }
    case 'asg': {
      const { min, max, desired } = rec.capacity;
      const lt = rec.launchTemplate === null ? null : one(rec.launchTemplate);
      keep(
        rec.ref,
        autoScalingGroup(
          w,
          account,
          rec.region,
          rec.name,
          rec.subnets.flatMap(all),
          all(rec.instances),
          min,
          max,
          desired,
          lt,
          rec.targetGroups.map(one),
          rec.tags,
        ),
      );
      return;
    }
    case 'alarm': {
      const target = one(rec.target);
      w.alarm({
        account,
        region: rec.region,
        name: rec.name,
        namespace: rec.namespace,
        metric: rec.metric,
        dimension: [rec.dimension, target.nativeId],
        target,
        actions: rec.notifies,
      });
      return;
    }
    case 'volume':
      keep(
        rec.ref,
        w.volume({
          key: rec.key,
          account,
          region: rec.region,
          az: rec.az,
          type: rec.type,
          size: rec.size,
          iops: rec.iops,
          encrypted: rec.encrypted,
          createDay: rec.createDay,
          attachedTo: rec.attachedTo ? one(rec.attachedTo) : null,
          device: rec.device,
          tags: rec.tags,
        }),
      );
      return;
    case 'snapshot':
      w.snapshot({
        key: rec.key,
        account,
        region: rec.region,
        volumeId: w.id('vol', rec.volumeKey),
        size: rec.size,
        startDay: rec.startDay,
        encrypted: rec.encrypted,
        tags: rec.tags,
      });
      return;
    case 'log-group':
      w.logGroup(account, rec.region, rec.name, rec.retentionDays, rec.storedGb, rec.tags);
      return;
    case 'rds': {
      const { kind: _kind, ref, account: _account, region, id, sgs, defect: _defect, ...o } = rec;
      keep(ref, rds(w, account, region, id, { ...o, sgs: sgs.map(one) }));
      return;
    }
    case 'rds-snapshot':
      rdsSnapshot(w, account, rec.region, rec.id, rec.sourceDb, rec.gb, rec.day);
      return;
    case 'bucket':
      keep(
        rec.ref,
        bucket(w, account, rec.region, rec.name, {
          publicAcl: rec.publicAcl,
          blockAll: rec.blockAll,
          policy: rec.policy,
          tags: rec.tags,
          sizeGb: rec.sizeGb,
          lifecycle: rec.lifecycle,
        }),
      );
      return;
    case 'resource':
      keep(
        rec.ref,
        w.add({
          type: rec.type,
          nativeId: rec.nativeId,
          arn: rec.arn,
          account,
          region: rec.region,
          name: rec.name,
          tags: rec.tags,
          attributes: rec.attributes,
        }),
      );
      return;
    case 'dns-record':
      route53(w, w.accounts[rec.account], rec.name, one(rec.target));
      return;
    case 'link':
      for (const from of all(rec.from))
        w.link(from.arn, one(rec.to).arn, rec.edge, rec.source, rec.confidence);
      return;
  }
}

function buildInstance(
  w: WorldBuilder,
  shape: InstanceShape,
  key: string,
  name: string,
  subnet: InventoryResource,
  launchDay: number,
  refs: Map<Ref, InventoryResource | InventoryResource[]>,
): InventoryResource {
  return w.instance({
    key,
    subnet,
    name,
    instanceType: shape.instanceType,
    sgs: shape.sgs.map((ref) => only(refs, ref)),
    tags: shape.tags,
    launchDay,
    state: shape.state,
    stoppedDay: shape.stoppedDay,
    imdsV2: shape.imdsV2,
    publicIp: shape.publicIp,
    role: shape.role ? only(refs, shape.role) : null,
    platform: shape.platform,
    rootVolume: shape.root,
    launchTemplate: shape.launchTemplate ? only(refs, shape.launchTemplate) : undefined,
  });
}
