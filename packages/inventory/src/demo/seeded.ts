import type { InventoryResource } from '../model';
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
import type { InstanceShape, Ref, Seeded, SeededRecord } from './seeded-types';
import type { WorldBuilder } from './world';

// The records' types and the glossary are in seeded-types.ts (the tables import them from there).
export type { Seeded, AccountKey, Ref, SecurityGroupRule, SeededRecord, SeededSection } from './seeded-types';

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
