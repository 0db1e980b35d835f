import {
  paginateDescribeDBInstances,
  paginateDescribeDBSnapshots,
  RDSClient,
  type DBInstance,
} from '@aws-sdk/client-rds';
import type { CollectContext } from './collect-context';
import { iso, orNull, snake, tagRecord } from './shape';

/** RDS DB instances (Aurora members included; detectors skip them by engine) and DB snapshots. */
export async function collectRds(ctx: CollectContext): Promise<void> {
  const client = ctx.client(RDSClient);
  await Promise.all([
    ctx.part(['aws_rds_db_instance'], () => collectInstances(ctx, client)),
    ctx.part(['aws_rds_db_snapshot'], () => collectSnapshots(ctx, client)),
  ]);
}

async function collectInstances(ctx: CollectContext, client: RDSClient) {
  for await (const page of paginateDescribeDBInstances({ client, pageSize: 100 }, {}, ctx.send)) {
    for (const db of page.DBInstances ?? []) if (db.DBInstanceIdentifier) addInstance(ctx, db);
  }
}

function addInstance(ctx: CollectContext, db: DBInstance) {
  const { out, region } = ctx;
  const id = db.DBInstanceIdentifier as string;
  const arn = db.DBInstanceArn ?? (out.rdsArn(region, 'db', id) as string);
  const tags = tagRecord(db.TagList);
  out.add({
    type: 'aws_rds_db_instance',
    arn,
    nativeId: id,
    region,
    availabilityZone: orNull(db.AvailabilityZone),
    name: tags.Name ?? id,
    tags,
    size: db.AllocatedStorage !== undefined ? [db.AllocatedStorage, 'GiB'] : null,
    attributes: {
      db_instance_identifier: id,
      arn,
      dbi_resource_id: orNull(db.DbiResourceId),
      class: orNull(db.DBInstanceClass),
      engine: orNull(db.Engine),
      engine_version: orNull(db.EngineVersion),
      status: orNull(db.DBInstanceStatus),
      multi_az: orNull(db.MultiAZ),
      backup_retention_period: orNull(db.BackupRetentionPeriod),
      preferred_backup_window: orNull(db.PreferredBackupWindow),
      latest_restorable_time: iso(db.LatestRestorableTime),
      deletion_protection: orNull(db.DeletionProtection),
      publicly_accessible: orNull(db.PubliclyAccessible),
      storage_encrypted: orNull(db.StorageEncrypted),
      kms_key_id: orNull(db.KmsKeyId),
      storage_type: orNull(db.StorageType),
      allocated_storage: orNull(db.AllocatedStorage),
      max_allocated_storage: orNull(db.MaxAllocatedStorage),
      iops: orNull(db.Iops),
      storage_throughput: orNull(db.StorageThroughput),
      availability_zone: orNull(db.AvailabilityZone),
      secondary_availability_zone: orNull(db.SecondaryAvailabilityZone),
      db_cluster_identifier: orNull(db.DBClusterIdentifier),
      db_name: orNull(db.DBName),
      endpoint: snake(db.Endpoint),
      db_subnet_group_name: orNull(db.DBSubnetGroup?.DBSubnetGroupName),
      vpc_id: orNull(db.DBSubnetGroup?.VpcId),
      subnets: (db.DBSubnetGroup?.Subnets ?? []).map((s) => ({
        subnet_id: orNull(s.SubnetIdentifier),
        availability_zone: orNull(s.SubnetAvailabilityZone?.Name),
      })),
      vpc_security_groups: (db.VpcSecurityGroups ?? []).map((g) => ({
        vpc_security_group_id: orNull(g.VpcSecurityGroupId),
        status: orNull(g.Status),
      })),
      read_replica_source_db_instance_identifier: orNull(db.ReadReplicaSourceDBInstanceIdentifier),
      read_replica_db_instance_identifiers: db.ReadReplicaDBInstanceIdentifiers ?? [],
      create_time: iso(db.InstanceCreateTime),
      auto_minor_version_upgrade: orNull(db.AutoMinorVersionUpgrade),
      iam_database_authentication_enabled: orNull(db.IAMDatabaseAuthenticationEnabled),
      performance_insights_enabled: orNull(db.PerformanceInsightsEnabled),
      enhanced_monitoring_resource_arn: orNull(db.EnhancedMonitoringResourceArn),
      ca_certificate_identifier: orNull(db.CACertificateIdentifier),
      license_model: orNull(db.LicenseModel),
      copy_tags_to_snapshot: orNull(db.CopyTagsToSnapshot),
    },
  });
  for (const g of db.VpcSecurityGroups ?? [])
    out.link(arn, out.ec2Arn(region, 'security-group', g.VpcSecurityGroupId), 'protected-by');
  // A cross-region replica names its source by ARN, a same-region one by identifier.
  const source = db.ReadReplicaSourceDBInstanceIdentifier;
  if (source)
    out.link(arn, source.startsWith('arn:') ? source : out.rdsArn(region, 'db', source), 'depends-on');
}

async function collectSnapshots(ctx: CollectContext, client: RDSClient) {
  const { out, region } = ctx;
  for await (const page of paginateDescribeDBSnapshots({ client, pageSize: 100 }, {}, ctx.send)) {
    for (const s of page.DBSnapshots ?? []) {
      if (!s.DBSnapshotIdentifier) continue;
      const arn = s.DBSnapshotArn ?? (out.rdsArn(region, 'snapshot', s.DBSnapshotIdentifier) as string);
      out.add({
        type: 'aws_rds_db_snapshot',
        arn,
        nativeId: s.DBSnapshotIdentifier,
        region,
        availabilityZone: orNull(s.AvailabilityZone),
        name: s.DBSnapshotIdentifier,
        tags: tagRecord(s.TagList),
        size: s.AllocatedStorage !== undefined ? [s.AllocatedStorage, 'GiB'] : null,
        attributes: {
          db_snapshot_identifier: s.DBSnapshotIdentifier,
          db_instance_identifier: orNull(s.DBInstanceIdentifier),
          snapshot_type: orNull(s.SnapshotType),
          snapshot_create_time: iso(s.SnapshotCreateTime),
          instance_create_time: iso(s.InstanceCreateTime),
          status: orNull(s.Status),
          engine: orNull(s.Engine),
          engine_version: orNull(s.EngineVersion),
          allocated_storage: orNull(s.AllocatedStorage),
          storage_type: orNull(s.StorageType),
          encrypted: orNull(s.Encrypted),
          kms_key_id: orNull(s.KmsKeyId),
          vpc_id: orNull(s.VpcId),
        },
      });
      out.link(arn, out.rdsArn(region, 'db', s.DBInstanceIdentifier), 'depends-on');
    }
  }
}
