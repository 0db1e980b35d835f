// Data stores: RDS instances and snapshots, S3 buckets, DynamoDB tables, ElastiCache replication groups.
import { arnOf, idOf, type Registry, type TfRow } from './registry';
import { block, blocks, bool, isRecord, jsonDoc, num, pos, str, strs, type Values } from './values';

function mapDbInstance(row: TfRow, reg: Registry): void {
  const v = row.values;
  // Since AWS provider 5, `id` is the DbiResourceId; the identifier is what AWS and consoles name it by.
  const id = str(v.identifier) ?? idOf(row);
  const az = str(v.availability_zone);
  const sgs = strs(v.vpc_security_group_ids);
  const db = reg.add(row, 'aws_rds_db_instance', {
    nativeId: id,
    naturalName: id,
    availabilityZone: az,
    sizeValue: num(v.allocated_storage),
    sizeUnit: 'GiB',
    buildArn: arnOf('rds', `db:${id}`),
    attributes: {
      db_instance_identifier: id,
      dbi_resource_id: str(v.resource_id),
      class: str(v.instance_class),
      engine: str(v.engine),
      engine_version: str(v.engine_version_actual) ?? str(v.engine_version),
      status: str(v.status) ?? 'available',
      multi_az: bool(v.multi_az) ?? false,
      backup_retention_period: num(v.backup_retention_period) ?? 0,
      deletion_protection: bool(v.deletion_protection) ?? false,
      publicly_accessible: bool(v.publicly_accessible) ?? false,
      storage_encrypted: bool(v.storage_encrypted) ?? false,
      kms_key_id: str(v.kms_key_id),
      storage_type: str(v.storage_type),
      allocated_storage: num(v.allocated_storage),
      max_allocated_storage: pos(v.max_allocated_storage),
      iops: pos(v.iops),
      storage_throughput: pos(v.storage_throughput),
      availability_zone: az,
      db_subnet_group_name: str(v.db_subnet_group_name),
      vpc_security_groups: sgs.map((g) => ({ vpc_security_group_id: g, status: 'active' })),
      read_replica_source_db_instance_identifier: str(v.replicate_source_db),
      auto_minor_version_upgrade: bool(v.auto_minor_version_upgrade),
      endpoint_address: str(v.address),
      endpoint_port: num(v.port),
      db_name: str(v.db_name) ?? str(v.name),
      master_user_name: str(v.username),
      performance_insights_enabled: bool(v.performance_insights_enabled),
      monitoring_interval: num(v.monitoring_interval),
      skip_final_snapshot: bool(v.skip_final_snapshot),
    },
  });
  for (const g of sgs) reg.link(db, 'protected-by', { type: 'aws_vpc_security_group', id: g });
}

function mapDbSnapshot(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = str(v.db_snapshot_identifier) ?? idOf(row);
  const snap = reg.add(row, 'aws_rds_db_snapshot', {
    nativeId: id,
    naturalName: id,
    availabilityZone: str(v.availability_zone),
    sizeValue: num(v.allocated_storage),
    sizeUnit: 'GiB',
    buildArn: arnOf('rds', `snapshot:${id}`),
    attributes: {
      db_snapshot_identifier: id,
      db_instance_identifier: str(v.db_instance_identifier),
      allocated_storage: num(v.allocated_storage),
      encrypted: bool(v.encrypted) ?? false,
      engine: str(v.engine),
      engine_version: str(v.engine_version),
      status: str(v.status),
      type: str(v.snapshot_type),
      storage_type: str(v.storage_type),
    },
  });
  snap.arn ??= str(v.db_snapshot_arn);
}

/** True when a bucket policy allows anyone without a condition: AWS's own "is public" test, simplified. */
export function isPolicyPublic(policy: unknown): boolean {
  if (!isRecord(policy)) return false;
  const statements = Array.isArray(policy.Statement) ? policy.Statement : [policy.Statement];
  return statements.some((s) => {
    if (!isRecord(s) || s.Effect !== 'Allow' || s.Condition) return false;
    const p = s.Principal;
    const anyone = (x: unknown) => x === '*' || (Array.isArray(x) && x.includes('*'));
    return anyone(p) || (isRecord(p) && anyone(p.AWS));
  });
}

export interface Grant {
  grantee: { type: string | null; uri: string | null; id: string | null };
  permission: string | null;
}

const ALL_USERS = 'http://acs.amazonaws.com/groups/global/AllUsers';
const AUTHENTICATED = 'http://acs.amazonaws.com/groups/global/AuthenticatedUsers';

/** The grants a canned ACL adds beyond the owner's FULL_CONTROL. */
export function cannedAclGrants(acl: string | null): Grant[] {
  const group = (uri: string, permission: string): Grant => ({
    grantee: { type: 'Group', uri, id: null },
    permission,
  });
  switch (acl) {
    case 'public-read':
      return [group(ALL_USERS, 'READ')];
    case 'public-read-write':
      return [group(ALL_USERS, 'READ'), group(ALL_USERS, 'WRITE')];
    case 'authenticated-read':
      return [group(AUTHENTICATED, 'READ')];
    default:
      return [];
  }
}

function mapBucket(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.bucket) ?? idOf(row);
  const versioning = block(v.versioning);
  const sse = block(v.server_side_encryption_configuration);
  const policy = jsonDoc(v.policy);
  const grants: Grant[] = [
    ...cannedAclGrants(str(v.acl)),
    ...blocks(v.grant).flatMap((g) =>
      strs(g.permissions).map((permission) => ({
        grantee: { type: str(g.type), uri: str(g.uri), id: str(g.id) },
        permission,
      })),
    ),
  ];
  reg.add(row, 'aws_s3_bucket', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('s3', name, 'bare'),
    attributes: {
      name,
      region: str(v.region),
      bucket_domain_name: str(v.bucket_domain_name),
      // Unknown until an aws_s3_bucket_public_access_block says: the state alone cannot tell.
      block_public_acls: null,
      block_public_policy: null,
      ignore_public_acls: null,
      restrict_public_buckets: null,
      policy,
      bucket_policy_is_public: isPolicyPublic(policy),
      acl: { grants },
      versioning_enabled: bool(versioning?.enabled) ?? false,
      versioning_mfa_delete: bool(versioning?.mfa_delete) ?? false,
      server_side_encryption_configuration: sse ? sseRules(blocks(sse.rule)) : null,
      logging: block(v.logging)
        ? {
            target_bucket: str(block(v.logging)!.target_bucket),
            target_prefix: str(block(v.logging)!.target_prefix),
          }
        : null,
      lifecycle_rules: blocks(v.lifecycle_rule).map((r) => ({ id: str(r.id), enabled: bool(r.enabled) })),
      object_lock_enabled: bool(v.object_lock_enabled) ?? false,
    },
  });
}

/** `rule { apply_server_side_encryption_by_default { sse_algorithm } }` → `{rules: [{sse_algorithm...}]}`. */
export function sseRules(rules: Values[]) {
  return {
    rules: rules.map((r) => {
      const d = block(r.apply_server_side_encryption_by_default) ?? {};
      return {
        sse_algorithm: str(d.sse_algorithm),
        kms_master_key_id: str(d.kms_master_key_id),
        bucket_key_enabled: bool(r.bucket_key_enabled) ?? false,
      };
    }),
  };
}

function mapDynamoTable(row: TfRow, reg: Registry): void {
  const v = row.values;
  const name = str(v.name) ?? idOf(row);
  reg.add(row, 'aws_dynamodb_table', {
    nativeId: name,
    naturalName: name,
    buildArn: arnOf('dynamodb', `table/${name}`),
    attributes: {
      name,
      table_status: 'ACTIVE',
      billing_mode: str(v.billing_mode) ?? 'PROVISIONED',
      read_capacity: num(v.read_capacity),
      write_capacity: num(v.write_capacity),
      hash_key: str(v.hash_key),
      range_key: str(v.range_key),
      point_in_time_recovery_enabled: bool(block(v.point_in_time_recovery)?.enabled) ?? false,
      deletion_protection_enabled: bool(v.deletion_protection_enabled) ?? false,
      sse_enabled: bool(block(v.server_side_encryption)?.enabled) ?? false,
      stream_enabled: bool(v.stream_enabled) ?? false,
      table_class: str(v.table_class),
    },
  });
}

function mapReplicationGroup(row: TfRow, reg: Registry): void {
  const v = row.values;
  const id = str(v.replication_group_id) ?? idOf(row);
  const sgs = strs(v.security_group_ids);
  const onOff = (b: boolean | null) => (b ? 'enabled' : 'disabled');
  const rg = reg.add(row, 'aws_elasticache_replication_group', {
    nativeId: id,
    naturalName: id,
    buildArn: arnOf('elasticache', `replicationgroup:${id}`),
    attributes: {
      replication_group_id: id,
      description: str(v.description),
      cache_node_type: str(v.node_type),
      engine: str(v.engine) ?? 'redis',
      engine_version: str(v.engine_version_actual) ?? str(v.engine_version),
      automatic_failover: onOff(bool(v.automatic_failover_enabled)),
      multi_az: onOff(bool(v.multi_az_enabled)),
      num_cache_clusters: num(v.num_cache_clusters),
      member_clusters: strs(v.member_clusters),
      cluster_enabled: bool(v.cluster_enabled) ?? false,
      at_rest_encryption_enabled: bool(v.at_rest_encryption_enabled) ?? false,
      transit_encryption_enabled: bool(v.transit_encryption_enabled) ?? false,
      snapshot_retention_limit: num(v.snapshot_retention_limit),
      cache_subnet_group_name: str(v.subnet_group_name),
      security_group_ids: sgs,
    },
  });
  for (const g of sgs) reg.link(rg, 'protected-by', { type: 'aws_vpc_security_group', id: g });
}

/** CloudWatch dimension name → the type whose native id its value is. */
export const DATA_MAPPERS: Record<string, (row: TfRow, reg: Registry) => void> = {
  aws_db_instance: mapDbInstance,
  aws_db_snapshot: mapDbSnapshot,
  aws_s3_bucket: mapBucket,
  aws_dynamodb_table: mapDynamoTable,
  aws_elasticache_replication_group: mapReplicationGroup,
};
