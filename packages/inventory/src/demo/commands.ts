import { parse } from 'shell-quote';
import type { InventoryResource, ResourceType } from '../model';
import { hexId } from './random';
import { natGateway } from './builders';
import type { WorldBuilder } from './world';

/** A command `demo exec` refuses; the message reads like the AWS CLI's. */
export class DemoCommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'DemoCommandError';
  }
}

export interface CommandEffect {
  arn: string;
  type: string;
  change: 'created' | 'updated' | 'deleted';
}

export interface AppliedCommand {
  command: string;
  operation: string;
  effects: CommandEffect[];
}

type Args = Map<string, string[]>;

/** Splits a command line like a shell and reads `--name value…` options; `--flag` alone is 'true'. */
export function parseCommand(line: string): {
  service: string;
  operation: string;
  args: Args;
  region: string | null;
} {
  const words = parse(line.trim());
  if (words.some((w) => typeof w !== 'string')) {
    throw new DemoCommandError(
      'ParseError',
      'Only plain AWS CLI commands are accepted (no pipes, redirections or globs).',
    );
  }
  const tokens = words as string[];
  if (tokens[0] !== 'aws' || tokens.length < 3) {
    throw new DemoCommandError(
      'ParseError',
      'Expected an AWS CLI command: aws <service> <operation> [--option value ...]',
    );
  }
  const [, service, operation, ...rest] = tokens as [string, string, string, ...string[]];
  const args: Args = new Map();
  let current: string | null = null;
  for (const token of rest) {
    if (token.startsWith('--')) {
      current = token.slice(2);
      if (!args.has(current)) args.set(current, []);
    } else if (current) {
      args.get(current)!.push(token);
    } else {
      throw new DemoCommandError('ParseError', `Unexpected argument "${token}" before any --option`);
    }
  }
  const region = args.get('region')?.[0] ?? null;
  args.delete('region');
  for (const ignored of ['output', 'profile', 'no-cli-pager', 'apply-immediately', 'no-apply-immediately'])
    args.delete(ignored);
  return { service, operation, args, region };
}

function one(args: Args, name: string): string {
  const v = args.get(name);
  if (!v || v.length !== 1)
    throw new DemoCommandError(
      'ParamValidation',
      `Parameter validation failed: --${name} takes exactly one value`,
    );
  return v[0]!;
}
function optional(args: Args, name: string): string | undefined {
  const v = args.get(name);
  if (!v) return undefined;
  if (v.length !== 1)
    throw new DemoCommandError('ParamValidation', `Parameter validation failed: --${name} takes one value`);
  return v[0];
}
function many(args: Args, name: string): string[] {
  const v = args.get(name);
  if (!v || v.length === 0)
    throw new DemoCommandError('ParamValidation', `Parameter validation failed: --${name} is required`);
  return v;
}
function int(value: string, name: string): number {
  if (!/^\d+$/.test(value))
    throw new DemoCommandError(
      'ParamValidation',
      `Invalid value for --${name}: "${value}" is not an integer`,
    );
  return Number(value);
}
/** --flag / --no-flag pairs; undefined when neither is given. */
function toggle(args: Args, name: string): boolean | undefined {
  const yes = args.has(name);
  const no = args.has(`no-${name}`);
  if (yes && no) throw new DemoCommandError('ParamValidation', `--${name} and --no-${name} are exclusive`);
  return yes ? true : no ? false : undefined;
}
/** AWS CLI shorthand `A=1,B=true` or a JSON object. */
function structure(value: string): Record<string, string> {
  const text = value.trim();
  if (text.startsWith('{')) {
    try {
      return Object.fromEntries(
        Object.entries(JSON.parse(text) as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
      );
    } catch {
      throw new DemoCommandError('ParamValidation', `Invalid JSON: ${value}`);
    }
  }
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const [k, ...v] = pair.split('=');
    if (!k || v.length === 0) throw new DemoCommandError('ParamValidation', `Invalid shorthand: ${value}`);
    out[k.trim()] = v.join('=').trim();
  }
  return out;
}
function bool(value: string | undefined, name: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new DemoCommandError('ParamValidation', `${name} must be true or false`);
}

/** What AWS answers when a command names a resource of a type that does not exist: its error code and noun. */
const NOT_FOUND: Partial<Record<ResourceType, [code: string, what: string]>> = {
  aws_cloudtrail_trail: ['TrailNotFoundException', 'trail'],
  aws_cloudwatch_log_group: ['ResourceNotFoundException', 'log group'],
  aws_dynamodb_table: ['TableNotFoundException', 'table'],
  aws_ebs_snapshot: ['InvalidSnapshot.NotFound', 'snapshot'],
  aws_ebs_volume: ['InvalidVolume.NotFound', 'volume'],
  aws_ec2_autoscaling_group: ['ValidationError', 'AutoScalingGroup'],
  aws_ec2_instance: ['InvalidInstanceID.NotFound', 'instance ID'],
  aws_elasticache_replication_group: ['ReplicationGroupNotFoundFault', 'replication group'],
  aws_iam_access_key: ['NoSuchEntity', 'access key'],
  aws_rds_db_instance: ['DBInstanceNotFound', 'DB instance'],
  aws_rds_db_snapshot: ['DBSnapshotNotFound', 'DB snapshot'],
  aws_s3_bucket: ['NoSuchBucket', 'bucket'],
  aws_vpc: ['InvalidVpcID.NotFound', 'vpc ID'],
  aws_vpc_eip: ['InvalidAllocationID.NotFound', 'allocation ID'],
  aws_vpc_internet_gateway: ['InvalidInternetGatewayID.NotFound', 'internet gateway'],
  aws_vpc_nat_gateway: ['NatGatewayNotFound', 'NAT gateway'],
  aws_vpc_route_table: ['InvalidRouteTableID.NotFound', 'route table ID'],
  aws_vpc_security_group: ['InvalidGroup.NotFound', 'security group'],
  aws_vpc_subnet: ['InvalidSubnetID.NotFound', 'subnet ID'],
};

/** The resource a command names, or the error AWS gives for it (the type's, or the command's own). */
function find(
  w: WorldBuilder,
  type: ResourceType,
  id: string,
  notFound: [code: string, what: string] = NOT_FOUND[type] ?? ['NotFound', type],
): InventoryResource {
  const r = w.get(id);
  if (!r || r.type !== type)
    throw new DemoCommandError(notFound[0], `The ${notFound[1]} '${id}' does not exist`);
  return r;
}

type Handler = (w: WorldBuilder, args: Args, region: string | null) => CommandEffect[];

const updated = (r: InventoryResource): CommandEffect => ({ arn: r.arn, type: r.type, change: 'updated' });
const deleted = (r: InventoryResource): CommandEffect => ({ arn: r.arn, type: r.type, change: 'deleted' });
const created = (r: InventoryResource): CommandEffect => ({ arn: r.arn, type: r.type, change: 'created' });

const VOLUME_TYPES = ['gp2', 'gp3', 'io1', 'io2', 'st1', 'sc1', 'standard'];
const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

function removeInstance(w: WorldBuilder, inst: InventoryResource, effects: CommandEffect[]) {
  for (const vol of [...w.resources.values()]) {
    if (vol.type !== 'aws_ebs_volume') continue;
    const attachments = vol.attributes.attachments as Array<{
      instance_id: string;
      delete_on_termination: boolean;
    }>;
    const mine = attachments.find((a) => a.instance_id === inst.nativeId);
    if (!mine) continue;
    if (mine.delete_on_termination) {
      w.remove(vol.arn);
      effects.push(deleted(vol));
    } else {
      vol.attributes.attachments = [];
      vol.attributes.state = 'available';
      w.unlink(vol.arn, inst.arn, 'attached-to');
      effects.push(updated(vol));
    }
  }
  w.remove(inst.arn);
  effects.push(deleted(inst));
}

const HANDLERS: Record<string, Handler> = {
  'ec2 delete-volume': (w, args) => {
    const vol = find(w, 'aws_ebs_volume', one(args, 'volume-id'));
    const attached = vol.attributes.attachments as Array<{ instance_id: string }>;
    if (attached.length)
      throw new DemoCommandError(
        'VolumeInUse',
        `Volume ${vol.nativeId} is currently attached to ${attached[0]!.instance_id}`,
      );
    w.remove(vol.arn);
    return [deleted(vol)];
  },
  'ec2 modify-volume': (w, args) => {
    const vol = find(w, 'aws_ebs_volume', one(args, 'volume-id'));
    const a = vol.attributes;
    const type = optional(args, 'volume-type');
    if (type !== undefined && !VOLUME_TYPES.includes(type))
      throw new DemoCommandError('InvalidParameterValue', `Invalid volume type: ${type}`);
    const size = optional(args, 'size');
    if (size !== undefined && int(size, 'size') < Number(a.size))
      throw new DemoCommandError(
        'InvalidParameterValue',
        `New size cannot be smaller than existing size ${String(a.size)}`,
      );
    const iops = optional(args, 'iops');
    const throughput = optional(args, 'throughput');
    if (type === undefined && size === undefined && iops === undefined && throughput === undefined) {
      throw new DemoCommandError(
        'MissingParameter',
        'At least one of --volume-type, --size, --iops, --throughput is required',
      );
    }
    if (type !== undefined) a.volume_type = type;
    if (size !== undefined) {
      a.size = int(size, 'size');
      vol.sizeValue = Number(a.size);
    }
    if (a.volume_type === 'gp3') {
      a.iops =
        iops !== undefined
          ? int(iops, 'iops')
          : Math.max(3000, type === undefined ? Number(a.iops ?? 3000) : 3000);
      a.throughput =
        throughput !== undefined
          ? int(throughput, 'throughput')
          : type === undefined
            ? Number(a.throughput ?? 125)
            : 125;
    } else if (a.volume_type === 'gp2') {
      a.iops = Math.min(16000, Math.max(100, Number(a.size) * 3));
      a.throughput = null;
    } else if (iops !== undefined) a.iops = int(iops, 'iops');
    return [updated(vol)];
  },
  'ec2 release-address': (w, args) => {
    const addr = find(w, 'aws_vpc_eip', one(args, 'allocation-id'));
    if (addr.attributes.association_id)
      throw new DemoCommandError(
        'InvalidIPAddress.InUse',
        `Address ${String(addr.attributes.public_ip)} is in use.`,
      );
    w.remove(addr.arn);
    return [deleted(addr)];
  },
  'ec2 revoke-security-group-ingress': (w, args) => {
    const sg = find(w, 'aws_vpc_security_group', one(args, 'group-id'));
    const wanted: Array<{
      ip_protocol: string;
      from_port: number | null;
      to_port: number | null;
      cidr_ipv4: string | null;
      cidr_ipv6: string | null;
    }> = [];
    const permissions = optional(args, 'ip-permissions');
    if (permissions) {
      let list: Array<Record<string, unknown>>;
      try {
        const parsed = JSON.parse(permissions) as unknown;
        list = (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
      } catch {
        throw new DemoCommandError(
          'ParamValidation',
          '--ip-permissions must be JSON (e.g. [{"IpProtocol":"tcp","FromPort":22,"ToPort":22,"IpRanges":[{"CidrIp":"0.0.0.0/0"}]}])',
        );
      }
      for (const p of list) {
        const base = {
          ip_protocol: String(p.IpProtocol),
          from_port: p.FromPort === undefined ? null : Number(p.FromPort),
          to_port: p.ToPort === undefined ? null : Number(p.ToPort),
        };
        for (const r of (p.IpRanges as Array<{ CidrIp: string }>) ?? [])
          wanted.push({ ...base, cidr_ipv4: r.CidrIp, cidr_ipv6: null });
        for (const r of (p.Ipv6Ranges as Array<{ CidrIpv6: string }>) ?? [])
          wanted.push({ ...base, cidr_ipv4: null, cidr_ipv6: r.CidrIpv6 });
      }
    } else {
      const protocol = one(args, 'protocol');
      const port = optional(args, 'port');
      const [from, to] =
        port === undefined
          ? [null, null]
          : port.includes('-')
            ? port.split('-').map((p) => int(p, 'port'))
            : [int(port, 'port'), int(port, 'port')];
      const cidr = one(args, 'cidr');
      wanted.push({
        ip_protocol: protocol === 'all' ? '-1' : protocol,
        from_port: from ?? null,
        to_port: to ?? null,
        cidr_ipv4: cidr.includes(':') ? null : cidr,
        cidr_ipv6: cidr.includes(':') ? cidr : null,
      });
    }
    const rules = sg.attributes.rules as Array<Record<string, unknown>>;
    for (const want of wanted) {
      const index = rules.findIndex(
        (r) =>
          r.type === 'ingress' &&
          r.ip_protocol === want.ip_protocol &&
          (want.ip_protocol === '-1' || (r.from_port === want.from_port && r.to_port === want.to_port)) &&
          (r.cidr_ipv4 ?? null) === want.cidr_ipv4 &&
          (r.cidr_ipv6 ?? null) === want.cidr_ipv6,
      );
      if (index < 0) {
        throw new DemoCommandError(
          'InvalidPermission.NotFound',
          `The specified rule does not exist in this security group.`,
        );
      }
      rules.splice(index, 1);
    }
    return [updated(sg)];
  },
  'ec2 stop-instances': (w, args) =>
    many(args, 'instance-ids').map((id) => {
      const inst = find(w, 'aws_ec2_instance', id);
      inst.attributes.instance_state = 'stopped';
      inst.attributes.state_transition_time = w.observedAt.toISOString();
      inst.attributes.public_ip_address = null;
      return updated(inst);
    }),
  'ec2 start-instances': (w, args) =>
    many(args, 'instance-ids').map((id) => {
      const inst = find(w, 'aws_ec2_instance', id);
      inst.attributes.instance_state = 'running';
      inst.attributes.state_transition_time = null;
      return updated(inst);
    }),
  'ec2 terminate-instances': (w, args) => {
    const effects: CommandEffect[] = [];
    for (const id of many(args, 'instance-ids')) removeInstance(w, find(w, 'aws_ec2_instance', id), effects);
    return effects;
  },
  'ec2 delete-snapshot': (w, args) => {
    const snap = find(w, 'aws_ebs_snapshot', one(args, 'snapshot-id'));
    w.remove(snap.arn);
    return [deleted(snap)];
  },
  'ec2 modify-instance-metadata-options': (w, args) => {
    const inst = find(w, 'aws_ec2_instance', one(args, 'instance-id'));
    const tokens = optional(args, 'http-tokens');
    if (tokens !== undefined && tokens !== 'required' && tokens !== 'optional')
      throw new DemoCommandError('InvalidParameterValue', '--http-tokens must be required or optional');
    const endpoint = optional(args, 'http-endpoint');
    inst.attributes.metadata_options = {
      ...(inst.attributes.metadata_options as object),
      ...(tokens ? { http_tokens: tokens } : {}),
      ...(endpoint ? { http_endpoint: endpoint } : {}),
    };
    return [updated(inst)];
  },
  'ec2 modify-instance-attribute': (w, args) => {
    const inst = find(w, 'aws_ec2_instance', one(args, 'instance-id'));
    const raw = one(args, 'instance-type');
    const type = raw.includes('=') || raw.startsWith('{') ? structure(raw).Value : raw;
    if (!type || !/^[a-z0-9]+\.[a-z0-9]+$/.test(type))
      throw new DemoCommandError('InvalidParameterValue', `Invalid instance type: ${raw}`);
    if (inst.attributes.instance_state !== 'stopped') {
      throw new DemoCommandError(
        'IncorrectInstanceState',
        `The instance '${inst.nativeId}' is not in the 'stopped' state.`,
      );
    }
    inst.attributes.instance_type = type;
    return [updated(inst)];
  },
  'ec2 delete-nat-gateway': (w, args) => {
    const nat = find(w, 'aws_vpc_nat_gateway', one(args, 'nat-gateway-id'));
    for (const r of w.resources.values()) {
      if (r.type !== 'aws_vpc_route_table') continue;
      for (const route of r.attributes.routes as Array<Record<string, unknown>>)
        if (route.nat_gateway_id === nat.nativeId) route.state = 'blackhole';
    }
    w.remove(nat.arn);
    return [deleted(nat)];
  },
  'ec2 create-nat-gateway': (w, args) => {
    const subnet = find(w, 'aws_vpc_subnet', one(args, 'subnet-id'));
    const addr = find(w, 'aws_vpc_eip', one(args, 'allocation-id'));
    if (addr.attributes.association_id)
      throw new DemoCommandError(
        'Resource.AlreadyAssociated',
        `Elastic IP address [${addr.nativeId}] is already associated`,
      );
    const key = `cmd:nat:${subnet.nativeId}:${addr.nativeId}`;
    const nat = natGateway(w, subnet, key, addr, w.spec.day, {
      Name: `nat-${String(subnet.attributes.availability_zone).slice(-2)}`,
    });
    addr.attributes.association_id = `eipassoc-${hexId(w.spec.seed, `${key}:assoc`, 17)}`;
    addr.attributes.network_interface_id = `eni-${hexId(w.spec.seed, `${key}:eni`, 17)}`;
    return [created(nat), updated(addr)];
  },
  'ec2 create-route-table': (w, args) => {
    const vpc = find(w, 'aws_vpc', one(args, 'vpc-id'));
    const n = [...w.resources.values()].filter(
      (r) => r.type === 'aws_vpc_route_table' && r.attributes.vpc_id === vpc.nativeId,
    ).length;
    const id = w.id('rtb', `cmd:rt:${vpc.nativeId}:${n}`);
    const rt = w.add({
      type: 'aws_vpc_route_table',
      nativeId: id,
      arn: w.ec2Arn(vpc.accountId, vpc.region, 'route-table', id),
      account: vpc.accountId,
      region: vpc.region,
      attributes: {
        route_table_id: id,
        vpc_id: vpc.nativeId,
        routes: [
          { destination_cidr_block: String(vpc.attributes.cidr_block), gateway_id: 'local', state: 'active' },
        ],
        associations: [],
      },
    });
    return [created(rt)];
  },
  'ec2 create-route': (w, args) => routeChange(w, args, 'create'),
  'ec2 replace-route': (w, args) => routeChange(w, args, 'replace'),
  'ec2 replace-route-table-association': (w, args) => {
    const associationId = one(args, 'association-id');
    const target = find(w, 'aws_vpc_route_table', one(args, 'route-table-id'));
    const source = [...w.resources.values()].find(
      (r) =>
        r.type === 'aws_vpc_route_table' &&
        (r.attributes.associations as Array<{ route_table_association_id: string }>).some(
          (a) => a.route_table_association_id === associationId,
        ),
    );
    if (!source)
      throw new DemoCommandError(
        'InvalidAssociationID.NotFound',
        `The association ID '${associationId}' does not exist`,
      );
    const associations = source.attributes.associations as Array<{
      subnet_id: string;
      route_table_association_id: string;
      main: boolean;
    }>;
    const association = associations.find((a) => a.route_table_association_id === associationId)!;
    source.attributes.associations = associations.filter((a) => a !== association);
    (target.attributes.associations as unknown[]).push(association);
    const subnet = w.get(association.subnet_id);
    if (subnet) {
      subnet.attributes.route_table_id = target.nativeId;
      w.unlink(subnet.arn, source.arn, 'depends-on');
      w.link(subnet.arn, target.arn, 'depends-on');
    }
    return [updated(source), updated(target), ...(subnet ? [updated(subnet)] : [])];
  },
  'elbv2 delete-load-balancer': (w, args) => {
    const arn = one(args, 'load-balancer-arn');
    const lb = w.resources.get(arn);
    if (!lb || lb.type !== 'aws_ec2_application_load_balancer')
      throw new DemoCommandError('LoadBalancerNotFound', `One or more load balancers not found`);
    if (
      (lb.attributes.load_balancer_attributes as { deletion_protection_enabled: boolean })
        .deletion_protection_enabled
    ) {
      throw new DemoCommandError(
        'OperationNotPermitted',
        `Load balancer '${arn}' cannot be deleted because deletion protection is enabled`,
      );
    }
    w.remove(lb.arn);
    return [deleted(lb)];
  },
  'elbv2 modify-load-balancer-attributes': (w, args) => {
    const arn = one(args, 'load-balancer-arn');
    const lb = w.resources.get(arn);
    if (!lb || lb.type !== 'aws_ec2_application_load_balancer')
      throw new DemoCommandError('LoadBalancerNotFound', `One or more load balancers not found`);
    for (const raw of many(args, 'attributes')) {
      const { Key, Value } = structure(raw);
      if (Key !== 'deletion_protection.enabled')
        throw new DemoCommandError('ValidationError', `Unsupported attribute in this demo: ${String(Key)}`);
      (lb.attributes.load_balancer_attributes as Record<string, unknown>).deletion_protection_enabled = bool(
        Value,
        Key,
      );
    }
    return [updated(lb)];
  },
  'rds modify-db-instance': (w, args) => {
    const db = find(w, 'aws_rds_db_instance', one(args, 'db-instance-identifier'));
    const a = db.attributes;
    let changed = false;
    const multi = toggle(args, 'multi-az');
    if (multi !== undefined) {
      a.multi_az = multi;
      a.secondary_availability_zone = multi
        ? `${db.region}${String(a.availability_zone).endsWith('a') ? 'b' : 'a'}`
        : null;
      changed = true;
    }
    const retention = optional(args, 'backup-retention-period');
    if (retention !== undefined) {
      const days = int(retention, 'backup-retention-period');
      if (days > 35)
        throw new DemoCommandError(
          'InvalidParameterValue',
          'The backup retention period must be between 0 and 35 days.',
        );
      a.backup_retention_period = days;
      changed = true;
    }
    for (const [flag, field] of [
      ['deletion-protection', 'deletion_protection'],
      ['publicly-accessible', 'publicly_accessible'],
      ['auto-minor-version-upgrade', 'auto_minor_version_upgrade'],
    ] as const) {
      const v = toggle(args, flag);
      if (v !== undefined) {
        a[field] = v;
        changed = true;
      }
    }
    const dbClass = optional(args, 'db-instance-class');
    if (dbClass !== undefined) {
      if (!/^db\.[a-z0-9]+\.[a-z0-9]+$/.test(dbClass))
        throw new DemoCommandError('InvalidParameterValue', `Invalid DB instance class: ${dbClass}`);
      a.class = dbClass;
      changed = true;
    }
    if (!changed)
      throw new DemoCommandError('InvalidParameterCombination', 'No modifications were requested');
    return [updated(db)];
  },
  'rds delete-db-instance': (w, args) => {
    const db = find(w, 'aws_rds_db_instance', one(args, 'db-instance-identifier'));
    if (db.attributes.deletion_protection) {
      throw new DemoCommandError(
        'InvalidParameterCombination',
        'Cannot delete protected DB Instance, please disable deletion protection and try again.',
      );
    }
    const finalSnapshot = optional(args, 'final-db-snapshot-identifier');
    if (!finalSnapshot && !args.has('skip-final-snapshot')) {
      throw new DemoCommandError(
        'InvalidParameterCombination',
        'FinalDBSnapshotIdentifier is required unless SkipFinalSnapshot is specified.',
      );
    }
    const effects: CommandEffect[] = [];
    if (finalSnapshot) {
      const snap = w.add({
        type: 'aws_rds_db_snapshot',
        nativeId: finalSnapshot,
        arn: `arn:aws:rds:${db.region}:${db.accountId}:snapshot:${finalSnapshot}`,
        account: db.accountId,
        region: db.region,
        name: finalSnapshot,
        size: [Number(db.attributes.allocated_storage), 'GiB'],
        attributes: {
          db_snapshot_identifier: finalSnapshot,
          db_instance_identifier: db.nativeId,
          snapshot_create_time: w.observedAt.toISOString(),
          allocated_storage: db.attributes.allocated_storage,
          status: 'available',
          encrypted: db.attributes.storage_encrypted,
          snapshot_type: 'manual',
        },
      });
      effects.push(created(snap));
    }
    w.remove(db.arn);
    effects.push(deleted(db));
    return effects;
  },
  'rds delete-db-snapshot': (w, args) => {
    const snap = find(w, 'aws_rds_db_snapshot', one(args, 'db-snapshot-identifier'));
    w.remove(snap.arn);
    return [deleted(snap)];
  },
  'rds stop-db-instance': (w, args) => {
    const db = find(w, 'aws_rds_db_instance', one(args, 'db-instance-identifier'));
    db.attributes.status = 'stopped';
    return [updated(db)];
  },
  's3api put-public-access-block': (w, args) => {
    const bucket = find(w, 'aws_s3_bucket', one(args, 'bucket'));
    const c = structure(one(args, 'public-access-block-configuration'));
    const a = bucket.attributes;
    a.block_public_acls = bool(c.BlockPublicAcls, 'BlockPublicAcls');
    a.ignore_public_acls = bool(c.IgnorePublicAcls, 'IgnorePublicAcls');
    a.block_public_policy = bool(c.BlockPublicPolicy, 'BlockPublicPolicy');
    a.restrict_public_buckets = bool(c.RestrictPublicBuckets, 'RestrictPublicBuckets');
    return [updated(bucket)];
  },
  's3api delete-bucket-policy': (w, args) => {
    const bucket = find(w, 'aws_s3_bucket', one(args, 'bucket'));
    bucket.attributes.policy_std = null;
    bucket.attributes.bucket_policy_is_public = false;
    return [updated(bucket)];
  },
  's3api put-bucket-acl': (w, args) => {
    const bucket = find(w, 'aws_s3_bucket', one(args, 'bucket'));
    if (one(args, 'acl') !== 'private')
      throw new DemoCommandError('InvalidArgument', 'This demo applies --acl private only');
    const acl = bucket.attributes.acl as { owner: unknown; grants: Array<{ grantee: { type: string } }> };
    acl.grants = acl.grants.filter((g) => g.grantee.type === 'CanonicalUser');
    return [updated(bucket)];
  },
  'logs put-retention-policy': (w, args) => {
    const group = find(w, 'aws_cloudwatch_log_group', one(args, 'log-group-name'));
    const days = int(one(args, 'retention-in-days'), 'retention-in-days');
    if (!RETENTION_DAYS.includes(days))
      throw new DemoCommandError(
        'InvalidParameterException',
        `Invalid retention value ${days}; allowed: ${RETENTION_DAYS.join(', ')}`,
      );
    group.attributes.retention_in_days = days;
    return [updated(group)];
  },
  'logs delete-log-group': (w, args) => {
    const group = find(w, 'aws_cloudwatch_log_group', one(args, 'log-group-name'));
    w.remove(group.arn);
    return [deleted(group)];
  },
  'iam update-access-key': (w, args) => {
    const key = find(w, 'aws_iam_access_key', one(args, 'access-key-id'));
    const user = optional(args, 'user-name');
    if (user !== undefined && user !== key.attributes.user_name)
      throw new DemoCommandError(
        'NoSuchEntity',
        `The Access Key with id ${key.nativeId} cannot be found for user ${user}`,
      );
    const status = one(args, 'status');
    if (status !== 'Active' && status !== 'Inactive')
      throw new DemoCommandError('ValidationError', '--status must be Active or Inactive');
    key.attributes.status = status;
    return [updated(key)];
  },
  'iam delete-access-key': (w, args) => {
    const key = find(w, 'aws_iam_access_key', one(args, 'access-key-id'));
    w.remove(key.arn);
    return [deleted(key)];
  },
  'autoscaling update-auto-scaling-group': (w, args) => {
    const asg = find(w, 'aws_ec2_autoscaling_group', one(args, 'auto-scaling-group-name'));
    const a = asg.attributes;
    const min = optional(args, 'min-size');
    const max = optional(args, 'max-size');
    const desired = optional(args, 'desired-capacity');
    const zones = optional(args, 'vpc-zone-identifier');
    if (min !== undefined) a.min_size = int(min, 'min-size');
    if (max !== undefined) a.max_size = int(max, 'max-size');
    if (desired !== undefined) a.desired_capacity = int(desired, 'desired-capacity');
    const [lo, hi, want] = [Number(a.min_size), Number(a.max_size), Number(a.desired_capacity)];
    if (lo > hi)
      throw new DemoCommandError('ValidationError', 'Max bound, must be greater than or equal to min bound');
    if (want < lo || want > hi)
      throw new DemoCommandError(
        'ValidationError',
        `Desired capacity:${want} must be between the specified min size:${lo} and max size:${hi}`,
      );
    const effects: CommandEffect[] = [updated(asg)];
    if (zones !== undefined) {
      const subnets = zones
        .split(',')
        .map((id) => find(w, 'aws_vpc_subnet', id.trim(), ['ValidationError', 'subnet']));
      a.vpc_zone_identifier = subnets.map((s) => s.nativeId).join(',');
      a.availability_zones = [...new Set(subnets.map((s) => String(s.attributes.availability_zone)))];
    }
    // The group converges on its desired capacity: it launches (or terminates) instances.
    const members = a.instances as Array<{ instance_id: string; availability_zone: string | null }>;
    const template = w.get(members[0]?.instance_id ?? '');
    const subnets = String(a.vpc_zone_identifier)
      .split(',')
      .map((id) => w.get(id)!)
      .filter(Boolean);
    let n = 0;
    while (members.length < want && template && subnets.length) {
      const subnet = subnets[(members.length + n) % subnets.length]!;
      const inst = w.instance({
        key: `cmd:${asg.nativeId}:${w.spec.day}:${members.length}:${n++}`,
        subnet,
        name: `${asg.nativeId.replace(/-asg$/, '')}-${members.length + 1}`,
        instanceType: String(template.attributes.instance_type),
        sgs: (template.attributes.security_groups as Array<{ group_id: string }>)
          .map((g) => w.get(g.group_id)!)
          .filter(Boolean),
        tags: Object.fromEntries(Object.entries(template.tags).filter(([k]) => k !== 'Name')),
        launchDay: w.spec.day,
        rootVolume: { type: 'gp3', size: 30 },
      });
      members.push({ instance_id: inst.nativeId, availability_zone: inst.availabilityZone });
      w.link(asg.arn, inst.arn, 'contains');
      effects.push(created(inst));
    }
    while (members.length > want) {
      const gone = members.pop()!;
      const inst = w.get(gone.instance_id);
      if (inst) removeInstance(w, inst, effects);
    }
    a.instances = members.map((m) => ({ ...m, lifecycle_state: 'InService', health_status: 'Healthy' }));
    return effects;
  },
  'elasticache increase-replica-count': (w, args) => {
    const group = find(w, 'aws_elasticache_replication_group', one(args, 'replication-group-id'));
    const count = int(one(args, 'new-replica-count'), 'new-replica-count');
    const members = group.attributes.member_clusters as string[];
    const id = group.nativeId;
    while (members.length < count + 1) members.push(`${id}-${String(members.length + 1).padStart(3, '0')}`);
    return [updated(group)];
  },
  'elasticache modify-replication-group': (w, args) => {
    const group = find(w, 'aws_elasticache_replication_group', one(args, 'replication-group-id'));
    const failover = toggle(args, 'automatic-failover-enabled');
    const multi = toggle(args, 'multi-az-enabled');
    if (failover === undefined && multi === undefined)
      throw new DemoCommandError('InvalidParameterCombination', 'No modifications were requested');
    if ((failover || multi) && (group.attributes.member_clusters as string[]).length < 2) {
      throw new DemoCommandError(
        'InvalidParameterCombination',
        'Automatic failover needs at least one replica: run increase-replica-count first.',
      );
    }
    if (failover !== undefined) group.attributes.automatic_failover = failover ? 'enabled' : 'disabled';
    if (multi !== undefined) group.attributes.multi_az = multi ? 'enabled' : 'disabled';
    return [updated(group)];
  },
  'dynamodb update-continuous-backups': (w, args) => {
    const table = find(w, 'aws_dynamodb_table', one(args, 'table-name'));
    const spec = structure(one(args, 'point-in-time-recovery-specification'));
    const enabled = bool(spec.PointInTimeRecoveryEnabled, 'PointInTimeRecoveryEnabled');
    table.attributes.point_in_time_recovery_description = {
      point_in_time_recovery_status: enabled ? 'ENABLED' : 'DISABLED',
    };
    return [updated(table)];
  },
  'cloudwatch put-metric-alarm': (w, args, region) => {
    const name = one(args, 'alarm-name');
    const namespace = one(args, 'namespace');
    const metric = one(args, 'metric-name');
    const dims = (args.get('dimensions') ?? []).map((d) => structure(d));
    const actions = args.get('alarm-actions') ?? [];
    const existing = w.get(name);
    if (existing && existing.type === 'aws_cloudwatch_alarm') {
      Object.assign(existing.attributes, {
        namespace,
        metric_name: metric,
        dimensions: dims.map((d) => ({ name: d.Name, value: d.Value })),
        alarm_actions: actions,
      });
      return [updated(existing)];
    }
    const target = dims.map((d) => w.get(String(d.Value))).find(Boolean);
    const account = target?.accountId ?? w.accounts.prod;
    const where = region ?? target?.region ?? 'us-east-1';
    const alarm = w.add({
      type: 'aws_cloudwatch_alarm',
      nativeId: name,
      arn: `arn:aws:cloudwatch:${where}:${account}:alarm:${name}`,
      account,
      region: where,
      name,
      attributes: {
        alarm_name: name,
        namespace,
        metric_name: metric,
        dimensions: dims.map((d) => ({ name: d.Name, value: d.Value })),
        alarm_actions: actions,
        ok_actions: args.get('ok-actions') ?? [],
        insufficient_data_actions: [],
        state_value: 'INSUFFICIENT_DATA',
        comparison_operator: optional(args, 'comparison-operator') ?? 'GreaterThanThreshold',
        threshold: Number(optional(args, 'threshold') ?? 80),
        period: Number(optional(args, 'period') ?? 300),
        evaluation_periods: Number(optional(args, 'evaluation-periods') ?? 3),
        statistic: optional(args, 'statistic') ?? 'Average',
      },
    });
    if (target) w.link(alarm.arn, target.arn, 'monitors');
    return [created(alarm)];
  },
  'cloudtrail update-trail': (w, args) => {
    const trail = find(w, 'aws_cloudtrail_trail', one(args, 'name'));
    const multi = toggle(args, 'is-multi-region-trail');
    if (multi === undefined)
      throw new DemoCommandError('InvalidParameterCombination', 'No modifications were requested');
    trail.attributes.is_multi_region_trail = multi;
    return [updated(trail)];
  },
};

function routeChange(w: WorldBuilder, args: Args, mode: 'create' | 'replace'): CommandEffect[] {
  const rt = find(w, 'aws_vpc_route_table', one(args, 'route-table-id'));
  const destination = one(args, 'destination-cidr-block');
  const nat = optional(args, 'nat-gateway-id');
  const gateway = optional(args, 'gateway-id');
  if (!nat === !gateway)
    throw new DemoCommandError(
      'InvalidParameterCombination',
      'Give exactly one of --nat-gateway-id and --gateway-id',
    );
  const target = nat
    ? find(w, 'aws_vpc_nat_gateway', nat, ['InvalidNatGatewayID.NotFound', 'NAT gateway'])
    : find(w, 'aws_vpc_internet_gateway', gateway!);
  const routes = rt.attributes.routes as Array<Record<string, unknown>>;
  const index = routes.findIndex((r) => r.destination_cidr_block === destination);
  if (mode === 'create' && index >= 0)
    throw new DemoCommandError(
      'RouteAlreadyExists',
      `The route identified by ${destination} already exists.`,
    );
  if (mode === 'replace' && index < 0)
    throw new DemoCommandError(
      'InvalidRoute.NotFound',
      `no route with destination-cidr-block ${destination} in route table ${rt.nativeId}`,
    );
  const previous = index >= 0 ? routes[index]! : null;
  const route = {
    destination_cidr_block: destination,
    ...(nat ? { nat_gateway_id: nat } : { gateway_id: gateway }),
    state: 'active',
  };
  if (index >= 0) routes[index] = route;
  else routes.push(route);
  if (previous) {
    const old = w.get(String(previous.nat_gateway_id ?? previous.gateway_id ?? ''));
    if (old) w.unlink(rt.arn, old.arn, 'routes-to');
  }
  w.link(rt.arn, target.arn, 'routes-to');
  return [updated(rt)];
}

/** The commands `demo exec` understands, as `service operation`. */
export const SUPPORTED_COMMANDS = Object.keys(HANDLERS).sort();

/**
 * Applies one mutating AWS CLI command to the world, as AWS would. Anything unsupported or invalid is
 * refused with an AWS-like error and changes nothing (callers apply it to a fresh world first).
 */
export function applyCommand(w: WorldBuilder, command: string, index: number): AppliedCommand {
  const { service, operation, args, region } = parseCommand(command);
  const handler = HANDLERS[`${service} ${operation}`];
  if (!handler) {
    throw new DemoCommandError(
      'UnsupportedCommand',
      `The demo environment does not support "aws ${service} ${operation}". Supported: ${SUPPORTED_COMMANDS.map((c) => `aws ${c}`).join(', ')}`,
    );
  }
  const effects = handler(w, args, region);
  // The command happened just before the environment's current observation, as the demo operator.
  const at = new Date(w.observedAt.getTime() - 60_000 + index * 1000);
  w.event({
    kind: 'cloudtrail',
    at: at.toISOString(),
    name: operation.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase()),
    actor: `arn:aws:iam::${w.accounts.prod}:user/opsi-demo-operator`,
    sourceIp: '192.0.2.10',
    arns: effects.map((e) => e.arn),
    payload: { eventSource: `${service}.amazonaws.com`, command },
  });
  return { command, operation: `${service} ${operation}`, effects };
}
