// EC2 instances (with their root and inline EBS volumes), EBS volumes and snapshots, Lambda functions.
import { arnOf, idOf, type Draft, type Registry, type TfRow } from './registry';
import { block, blocks, bool, num, pos, str, strMap, strs, type Values } from './values';

export interface VolumeAttachment {
  volume_id: string;
  instance_id: string | null;
  device: string | null;
  delete_on_termination: boolean;
  state: 'attached';
}

export function volumeAttributes(v: {
  id: string;
  type: string | null;
  size: number | null;
  az: string | null;
  src: Values;
  attachments: VolumeAttachment[];
}) {
  return {
    volume_id: v.id,
    volume_type: v.type,
    size: v.size,
    iops: pos(v.src.iops),
    throughput: pos(v.src.throughput),
    encrypted: bool(v.src.encrypted) ?? false,
    kms_key_id: str(v.src.kms_key_id),
    snapshot_id: str(v.src.snapshot_id),
    availability_zone: v.az,
    multi_attach_enabled: bool(v.src.multi_attach_enabled) ?? false,
    create_time: str(v.src.create_time),
    state: v.attachments.length ? 'in-use' : 'available',
    attachments: v.attachments,
  };
}

/** Records an attachment on a volume, and on its instance's block device mappings when it is imported. */
export function attachVolume(reg: Registry, volume: Draft, a: VolumeAttachment): void {
  const list = volume.attributes.attachments as VolumeAttachment[];
  if (!list.some((x) => x.instance_id === a.instance_id && x.device === a.device)) list.push(a);
  volume.attributes.state = 'in-use';
  reg.link(volume, 'attached-to', { type: 'aws_ec2_instance', id: a.instance_id ?? '' });
  const instance = reg.get('aws_ec2_instance', a.instance_id);
  if (!instance) return;
  const mappings = instance.attributes.block_device_mappings as {
    device_name: string | null;
    volume_id: string;
    delete_on_termination: boolean;
  }[];
  if (!mappings.some((m) => m.volume_id === a.volume_id)) {
    mappings.push({
      device_name: a.device,
      volume_id: a.volume_id,
      delete_on_termination: a.delete_on_termination,
    });
  }
}

function mapInstance(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const az = str(v.availability_zone);
  const subnetId = str(v.subnet_id);
  const sgIds = strs(v.vpc_security_group_ids);
  const profile = str(v.iam_instance_profile);
  const meta = block(v.metadata_options);
  const cpu = block(v.cpu_options);
  const cores = num(cpu?.core_count) ?? num(v.cpu_core_count);
  const threads = num(cpu?.threads_per_core) ?? num(v.cpu_threads_per_core) ?? 1;
  // The root and inline EBS devices are real volumes that Terraform tracks inside the instance.
  const devices = [
    ...blocks(v.root_block_device).map((b) => ({ b, root: true })),
    ...blocks(v.ebs_block_device).map((b) => ({ b, root: false })),
  ].filter((d) => str(d.b.volume_id));
  const instance = reg.add(row, 'aws_ec2_instance', {
    nativeId: id,
    availabilityZone: az,
    sizeValue: cores === null ? null : cores * threads,
    sizeUnit: 'vCPU',
    buildArn: arnOf('ec2', `instance/${id}`),
    attributes: {
      instance_id: id,
      instance_type: str(v.instance_type),
      instance_state: str(v.instance_state) ?? 'running',
      availability_zone: az,
      subnet_id: subnetId,
      vpc_id: null,
      security_groups: sgIds.map((group_id) => ({ group_id, group_name: null as unknown })),
      iam_instance_profile: profile,
      iam_instance_profile_arn: null,
      public_ip_address: str(v.public_ip),
      public_dns_name: str(v.public_dns),
      private_ip_address: str(v.private_ip),
      private_dns_name: str(v.private_dns),
      image_id: str(v.ami),
      key_name: str(v.key_name),
      ebs_optimized: bool(v.ebs_optimized) ?? false,
      monitoring_state: bool(v.monitoring) ? 'enabled' : 'disabled',
      tenancy: str(v.tenancy) ?? 'default',
      metadata_options: meta && {
        http_tokens: str(meta.http_tokens),
        http_endpoint: str(meta.http_endpoint),
        http_put_response_hop_limit: num(meta.http_put_response_hop_limit),
        instance_metadata_tags: str(meta.instance_metadata_tags),
      },
      cpu_options: cores === null ? null : { core_count: cores, threads_per_core: threads },
      root_device_name: str(block(v.root_block_device)?.device_name),
      block_device_mappings: devices.map(({ b }) => ({
        device_name: str(b.device_name),
        volume_id: str(b.volume_id),
        delete_on_termination: bool(b.delete_on_termination) ?? true,
      })),
    },
  });
  reg.link(instance, 'member-of', { type: 'aws_vpc_subnet', id: subnetId ?? '' });
  for (const g of sgIds) reg.link(instance, 'protected-by', { type: 'aws_vpc_security_group', id: g });

  for (const { b, root } of devices) {
    const volumeId = str(b.volume_id)!;
    const size = num(b.volume_size);
    const volume = reg.add(row, 'aws_ebs_volume', {
      address: `${row.address}.${root ? 'root_block_device' : `ebs_block_device["${str(b.device_name)}"]`}`,
      nativeId: volumeId,
      availabilityZone: az,
      tags: strMap(b.tags_all ?? b.tags),
      sizeValue: size,
      sizeUnit: 'GiB',
      buildArn: arnOf('ec2', `volume/${volumeId}`),
      attributes: volumeAttributes({
        id: volumeId,
        type: str(b.volume_type),
        size,
        az,
        src: b,
        attachments: [],
      }),
    });
    attachVolume(reg, volume, {
      volume_id: volumeId,
      instance_id: id,
      device: str(b.device_name),
      delete_on_termination: bool(b.delete_on_termination) ?? true,
      state: 'attached',
    });
  }

  reg.after(() => {
    const a = instance.attributes;
    a.vpc_id = reg.get('aws_vpc_subnet', subnetId)?.attributes.vpc_id ?? null;
    for (const g of a.security_groups as { group_id: string; group_name: unknown }[]) {
      g.group_name = reg.get('aws_vpc_security_group', g.group_id)?.attributes.group_name ?? null;
    }
    const p = reg.get('aws_iam_instance_profile', profile);
    if (!p) return;
    a.iam_instance_profile_arn = p.arn;
    reg.link(instance, 'uses-role', { type: 'aws_iam_role', id: str(p.attributes.role) ?? '' });
  });
}

function mapVolume(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const az = str(v.availability_zone);
  const size = num(v.size);
  reg.add(row, 'aws_ebs_volume', {
    nativeId: id,
    availabilityZone: az,
    sizeValue: size,
    sizeUnit: 'GiB',
    buildArn: arnOf('ec2', `volume/${id}`),
    attributes: volumeAttributes({ id, type: str(v.type), size, az, src: v, attachments: [] }),
  });
}

function mapSnapshot(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = idOf(row);
  const snap = reg.add(row, 'aws_ebs_snapshot', {
    nativeId: id,
    sizeValue: num(v.volume_size),
    sizeUnit: 'GiB',
    buildArn: arnOf('ec2', `snapshot/${id}`),
    attributes: {
      snapshot_id: id,
      volume_id: str(v.volume_id),
      volume_size: num(v.volume_size),
      encrypted: bool(v.encrypted) ?? false,
      kms_key_id: str(v.kms_key_id),
      description: str(v.description),
      owner_id: str(v.owner_id),
      storage_tier: str(v.storage_tier),
    },
  });
  reg.placeBy(snap, { type: 'aws_ebs_volume', id: str(v.volume_id) ?? '' }, false);
}

function mapLambda(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.function_name) ?? row.address;
  const fn = reg.add(row, 'aws_lambda_function', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('lambda', `function:${name}`),
    attributes: {
      name,
      runtime: str(v.runtime),
      handler: str(v.handler),
      role: str(v.role),
      timeout: num(v.timeout),
      memory_size: num(v.memory_size),
      architectures: strs(v.architectures),
      package_type: str(v.package_type),
      version: str(v.version),
      last_modified: str(v.last_modified),
    },
  });
  reg.link(fn, 'uses-role', { arn: str(v.role) ?? '' });
}

export const COMPUTE_MAPPERS: Record<string, (row: TfRow, reg: Registry) => void> = {
  aws_instance: mapInstance,
  aws_ebs_volume: mapVolume,
  aws_ebs_snapshot: mapSnapshot,
  aws_lambda_function: mapLambda,
};
