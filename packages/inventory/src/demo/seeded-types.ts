import type { EdgeKind, InventoryResource, ResourceType } from '../model';

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
export interface InstanceShape {
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
