import {
  EC2Client,
  GetEbsEncryptionByDefaultCommand,
  paginateDescribeInstances,
  paginateDescribeLaunchTemplateVersions,
  paginateDescribeLaunchTemplates,
  paginateDescribeSnapshots,
  paginateDescribeVolumes,
  type Instance,
  type ResponseLaunchTemplateData,
  type Snapshot,
  type Volume,
} from '@aws-sdk/client-ec2';
import type { CollectContext } from './collect-context';
import { iso, orNull, snake, snakeList, tagRecord } from './shape';

/** Instances, EBS volumes and snapshots, launch templates, and the region's EBS default encryption. */
export async function collectEc2(ctx: CollectContext): Promise<{ ebsEncryptionByDefault: boolean | null }> {
  const client = ctx.client(EC2Client);
  const [, , , , encryption] = await Promise.all([
    ctx.part(['aws_ec2_instance'], () => collectInstances(ctx, client)),
    ctx.part(['aws_ebs_volume'], () => collectVolumes(ctx, client)),
    ctx.part(['aws_ebs_snapshot'], () => collectSnapshots(ctx, client)),
    ctx.part(['aws_ec2_launch_template'], () => collectLaunchTemplates(ctx, client)),
    // Refused, the region's default is unknown (null), never "off".
    ctx.part([], () => client.send(new GetEbsEncryptionByDefaultCommand({}), ctx.send)),
  ]);
  return { ebsEncryptionByDefault: encryption?.EbsEncryptionByDefault ?? null };
}

/** "User initiated (2024-01-02 10:11:12 GMT)": DescribeInstances states the time only in this text. */
export function stateTransitionTime(reason: string | undefined): string | null {
  const m = /\((\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) GMT\)/.exec(reason ?? '');
  return m ? `${m[1]}T${m[2]}.000Z` : null;
}

async function collectInstances(ctx: CollectContext, client: EC2Client) {
  for await (const page of paginateDescribeInstances({ client, pageSize: 1000 }, {}, ctx.send)) {
    for (const reservation of page.Reservations ?? []) {
      for (const i of reservation.Instances ?? []) {
        // Terminated instances linger in DescribeInstances for about an hour; they are gone.
        if (i.State?.Name === 'terminated' || !i.InstanceId) continue;
        addInstance(ctx, i, reservation.OwnerId);
      }
    }
  }
}

function addInstance(ctx: CollectContext, i: Instance, ownerId: string | undefined) {
  const { out, region } = ctx;
  const id = i.InstanceId as string;
  const tags = tagRecord(i.Tags);
  const vcpu =
    i.CpuOptions?.CoreCount && i.CpuOptions.ThreadsPerCore
      ? i.CpuOptions.CoreCount * i.CpuOptions.ThreadsPerCore
      : null;
  const templateId = tags['aws:ec2launchtemplate:id'];
  const az = orNull(i.Placement?.AvailabilityZone);
  const arn = out.ec2Arn(region, 'instance', id) as string;
  out.add({
    type: 'aws_ec2_instance',
    arn,
    nativeId: id,
    region,
    availabilityZone: az,
    tags,
    size: vcpu ? [vcpu, 'vCPU'] : null,
    attributes: {
      instance_id: id,
      instance_type: orNull(i.InstanceType),
      instance_state: orNull(i.State?.Name),
      state_transition_reason: orNull(i.StateTransitionReason),
      state_transition_time: stateTransitionTime(i.StateTransitionReason),
      state_reason: snake(i.StateReason),
      launch_time: iso(i.LaunchTime),
      availability_zone: az,
      tenancy: orNull(i.Placement?.Tenancy),
      subnet_id: orNull(i.SubnetId),
      vpc_id: orNull(i.VpcId),
      security_groups: (i.SecurityGroups ?? []).map((g) => ({
        group_id: orNull(g.GroupId),
        group_name: orNull(g.GroupName),
      })),
      iam_instance_profile_arn: orNull(i.IamInstanceProfile?.Arn),
      iam_instance_profile_id: orNull(i.IamInstanceProfile?.Id),
      public_ip_address: orNull(i.PublicIpAddress),
      private_ip_address: orNull(i.PrivateIpAddress),
      public_dns_name: i.PublicDnsName || null,
      private_dns_name: i.PrivateDnsName || null,
      metadata_options: snake(i.MetadataOptions),
      platform: orNull(i.Platform),
      platform_details: orNull(i.PlatformDetails),
      architecture: orNull(i.Architecture),
      ebs_optimized: orNull(i.EbsOptimized),
      image_id: orNull(i.ImageId),
      key_name: orNull(i.KeyName),
      instance_lifecycle: orNull(i.InstanceLifecycle),
      monitoring_state: orNull(i.Monitoring?.State),
      cpu_options: snake(i.CpuOptions),
      root_device_name: orNull(i.RootDeviceName),
      root_device_type: orNull(i.RootDeviceType),
      block_device_mappings: (i.BlockDeviceMappings ?? []).map((b) => ({
        device_name: orNull(b.DeviceName),
        volume_id: orNull(b.Ebs?.VolumeId),
        status: orNull(b.Ebs?.Status),
        attach_time: iso(b.Ebs?.AttachTime),
        delete_on_termination: orNull(b.Ebs?.DeleteOnTermination),
      })),
      network_interfaces: snakeList(i.NetworkInterfaces),
      // An instance records the template it came from only in these AWS-managed tags.
      launch_template: templateId
        ? {
            launch_template_id: templateId,
            launch_template_name: null,
            version: orNull(tags['aws:ec2launchtemplate:version']),
          }
        : null,
      owner_id: orNull(ownerId),
    },
  });
  out.link(arn, out.ec2Arn(region, 'subnet', i.SubnetId), 'member-of');
  for (const g of i.SecurityGroups ?? [])
    out.link(arn, out.ec2Arn(region, 'security-group', g.GroupId), 'protected-by');
  if (templateId) out.link(arn, out.ec2Arn(region, 'launch-template', templateId), 'depends-on');
}

async function collectVolumes(ctx: CollectContext, client: EC2Client) {
  for await (const page of paginateDescribeVolumes({ client, pageSize: 500 }, {}, ctx.send)) {
    for (const v of page.Volumes ?? []) if (v.VolumeId) addVolume(ctx, v);
  }
}

function addVolume(ctx: CollectContext, v: Volume) {
  const { out, region } = ctx;
  const id = v.VolumeId as string;
  const arn = out.ec2Arn(region, 'volume', id) as string;
  out.add({
    type: 'aws_ebs_volume',
    arn,
    nativeId: id,
    region,
    availabilityZone: orNull(v.AvailabilityZone),
    tags: tagRecord(v.Tags),
    size: v.Size !== undefined ? [v.Size, 'GiB'] : null,
    attributes: {
      volume_id: id,
      volume_type: orNull(v.VolumeType),
      size: orNull(v.Size),
      iops: orNull(v.Iops),
      throughput: orNull(v.Throughput),
      encrypted: orNull(v.Encrypted),
      kms_key_id: orNull(v.KmsKeyId),
      state: orNull(v.State),
      attachments: (v.Attachments ?? []).map((a) => ({
        instance_id: orNull(a.InstanceId),
        device: orNull(a.Device),
        state: orNull(a.State),
        attach_time: iso(a.AttachTime),
        delete_on_termination: orNull(a.DeleteOnTermination),
      })),
      create_time: iso(v.CreateTime),
      snapshot_id: v.SnapshotId || null,
      availability_zone: orNull(v.AvailabilityZone),
      multi_attach_enabled: orNull(v.MultiAttachEnabled),
      fast_restored: orNull(v.FastRestored),
    },
  });
  for (const a of v.Attachments ?? [])
    out.link(arn, out.ec2Arn(region, 'instance', a.InstanceId), 'attached-to');
}

async function collectSnapshots(ctx: CollectContext, client: EC2Client) {
  // Public snapshots come from a second listing rather than one DescribeSnapshotAttribute per
  // snapshot: accounts keep thousands of snapshots, and "public" is the permission detectors need.
  const publicIds = new Set<string>();
  const pub = paginateDescribeSnapshots(
    { client, pageSize: 1000 },
    { OwnerIds: ['self'], RestorableByUserIds: ['all'] },
    ctx.send,
  );
  for await (const page of pub)
    for (const s of page.Snapshots ?? []) if (s.SnapshotId) publicIds.add(s.SnapshotId);
  for await (const page of paginateDescribeSnapshots(
    { client, pageSize: 1000 },
    { OwnerIds: ['self'] },
    ctx.send,
  )) {
    for (const s of page.Snapshots ?? []) if (s.SnapshotId) addSnapshot(ctx, s, publicIds.has(s.SnapshotId));
  }
}

function addSnapshot(ctx: CollectContext, s: Snapshot, isPublic: boolean) {
  const { out, region } = ctx;
  const id = s.SnapshotId as string;
  const arn = out.snapshotArn(region, id);
  // AWS reports vol-ffffffff for snapshots copied or made from an AMI: there is no source volume.
  const volumeId = s.VolumeId && s.VolumeId !== 'vol-ffffffff' ? s.VolumeId : null;
  out.add({
    type: 'aws_ebs_snapshot',
    arn,
    nativeId: id,
    region,
    tags: tagRecord(s.Tags),
    size: s.VolumeSize !== undefined ? [s.VolumeSize, 'GiB'] : null,
    attributes: {
      snapshot_id: id,
      volume_id: volumeId,
      volume_size: orNull(s.VolumeSize),
      start_time: iso(s.StartTime),
      encrypted: orNull(s.Encrypted),
      kms_key_id: orNull(s.KmsKeyId),
      state: orNull(s.State),
      progress: orNull(s.Progress),
      owner_id: orNull(s.OwnerId),
      description: orNull(s.Description),
      storage_tier: orNull(s.StorageTier),
      // Only the public grant is read (see collectSnapshots); grants to named accounts are not listed.
      create_volume_permissions: isPublic ? [{ group: 'all', user_id: null }] : [],
      is_public: isPublic,
    },
  });
  out.link(arn, out.ec2Arn(region, 'volume', volumeId), 'depends-on');
}

async function collectLaunchTemplates(ctx: CollectContext, client: EC2Client) {
  const { out, region } = ctx;
  // What instances launched from each template get: its default version's data, for every template of
  // the region in one paginated call ("$Default" without a template id means all of them).
  const defaults = new Map<string, ResponseLaunchTemplateData>();
  for await (const page of paginateDescribeLaunchTemplateVersions(
    { client, pageSize: 200 },
    { Versions: ['$Default'] },
    ctx.send,
  )) {
    for (const v of page.LaunchTemplateVersions ?? [])
      if (v.LaunchTemplateId && v.LaunchTemplateData) defaults.set(v.LaunchTemplateId, v.LaunchTemplateData);
  }
  for await (const page of paginateDescribeLaunchTemplates({ client, pageSize: 200 }, {}, ctx.send)) {
    for (const t of page.LaunchTemplates ?? []) {
      if (!t.LaunchTemplateId) continue;
      out.add({
        type: 'aws_ec2_launch_template',
        arn: out.ec2Arn(region, 'launch-template', t.LaunchTemplateId) as string,
        nativeId: t.LaunchTemplateId,
        region,
        name: orNull(t.LaunchTemplateName),
        tags: tagRecord(t.Tags),
        attributes: {
          launch_template_id: t.LaunchTemplateId,
          launch_template_name: orNull(t.LaunchTemplateName),
          default_version_number: orNull(t.DefaultVersionNumber),
          latest_version_number: orNull(t.LatestVersionNumber),
          create_time: iso(t.CreateTime),
          created_by: orNull(t.CreatedBy),
          // instance_type, block_device_mappings [{device_name, ebs {volume_type, …}}], metadata_options, …
          default_version: snake(defaults.get(t.LaunchTemplateId)),
        },
      });
    }
  }
}
