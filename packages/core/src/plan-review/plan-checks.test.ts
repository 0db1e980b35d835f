import { describe, expect, it } from 'vitest';
import { failedPlanChecks, PLAN_CHECKS, planAttachments } from './plan-checks';

// One positive and one negative after-state of our own per check, for each type that carries it.
const ingress = (o: Record<string, unknown>) => ({
  ingress: [
    { cidr_blocks: ['0.0.0.0/0'], ipv6_cidr_blocks: [], from_port: 22, to_port: 22, protocol: 'tcp', ...o },
  ],
});
const policy = (action: unknown, resource: unknown = '*') =>
  JSON.stringify({
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: action, Resource: resource }],
  });

type Ctx = Parameters<typeof failedPlanChecks>[2];
const complete = { complete: true };
/** A plan whose separate resources attach to these identifiers (see planAttachments). */
const withAttached = (type: string, known: string[], unknown = false): Ctx => ({
  complete: true,
  attached: { [type]: { known: new Set(known), unknown } },
});

const FIXTURES: Array<[string, string, Record<string, unknown>, Record<string, unknown>, Ctx?]> = [
  [
    'security.sg_all_ports_open',
    'aws_security_group',
    ingress({ protocol: '-1', from_port: 0, to_port: 0 }),
    ingress({ protocol: '-1', cidr_blocks: ['10.0.0.0/8'] }),
  ],
  [
    'security.sg_all_ports_open',
    'aws_security_group_rule',
    {
      type: 'ingress',
      cidr_blocks: [],
      ipv6_cidr_blocks: ['::/0'],
      protocol: 'tcp',
      from_port: 0,
      to_port: 65535,
    },
    { type: 'egress', cidr_blocks: ['0.0.0.0/0'], protocol: '-1', from_port: 0, to_port: 0 },
  ],
  [
    'security.sg_all_ports_open',
    'aws_vpc_security_group_ingress_rule',
    { cidr_ipv4: '0.0.0.0/0', ip_protocol: '-1' },
    { cidr_ipv4: '0.0.0.0/0', ip_protocol: 'tcp', from_port: 443, to_port: 443 },
  ],
  [
    'security.sg_ssh_open',
    'aws_security_group',
    ingress({ from_port: 0, to_port: 1024 }),
    ingress({ from_port: 80, to_port: 443 }),
  ],
  [
    'security.sg_ssh_open',
    'aws_default_security_group',
    ingress({}),
    ingress({ cidr_blocks: ['192.168.0.0/16'] }),
  ],
  [
    'security.sg_ssh_open',
    'aws_security_group_rule',
    { type: 'ingress', cidr_blocks: ['0.0.0.0/0'], protocol: 'tcp', from_port: 22, to_port: 22 },
    {
      type: 'ingress',
      cidr_blocks: ['0.0.0.0/0'],
      prefix_list_ids: ['pl-1'],
      protocol: 'tcp',
      from_port: 22,
      to_port: 22,
    },
  ],
  [
    'security.sg_ssh_open',
    'aws_vpc_security_group_ingress_rule',
    { cidr_ipv6: '::/0', ip_protocol: 'tcp', from_port: 22, to_port: 22 },
    { cidr_ipv4: '10.1.0.0/16', ip_protocol: 'tcp', from_port: 22, to_port: 22 },
  ],
  [
    'security.sg_rdp_open',
    'aws_security_group',
    ingress({ from_port: 3389, to_port: 3389 }),
    ingress({ from_port: 3390, to_port: 3400 }),
  ],
  [
    'security.sg_rdp_open',
    'aws_vpc_security_group_ingress_rule',
    { cidr_ipv4: '0.0.0.0/0', ip_protocol: 'tcp', from_port: 3000, to_port: 4000 },
    { cidr_ipv4: '0.0.0.0/0', ip_protocol: 'icmp', from_port: -1, to_port: -1 },
  ],
  ['security.s3_public_acl', 'aws_s3_bucket', { acl: 'public-read' }, { acl: 'private' }],
  [
    'security.s3_public_acl',
    'aws_s3_bucket_acl',
    { acl: 'public-read-write' },
    { acl: 'log-delivery-write' },
  ],
  [
    'security.s3_public_acl',
    'aws_s3_bucket_acl',
    {
      access_control_policy: [
        {
          grant: [
            {
              grantee: [{ type: 'Group', uri: 'http://acs.amazonaws.com/groups/global/AllUsers' }],
              permission: 'READ',
            },
          ],
        },
      ],
    },
    {
      access_control_policy: [
        { grant: [{ grantee: [{ type: 'CanonicalUser', id: 'abc' }], permission: 'FULL_CONTROL' }] },
      ],
    },
  ],
  [
    'security.s3_public_policy',
    'aws_s3_bucket_policy',
    {
      policy: JSON.stringify({
        Statement: [
          { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' },
        ],
      }),
    },
    {
      policy: JSON.stringify({
        Statement: [
          {
            Effect: 'Allow',
            Principal: '*',
            Action: 's3:GetObject',
            Resource: 'arn:aws:s3:::b/*',
            Condition: { StringEquals: { 'aws:SourceVpce': 'vpce-1' } },
          },
        ],
      }),
    },
  ],
  [
    'security.s3_public_policy',
    'aws_s3_bucket',
    {
      policy: JSON.stringify({
        Statement: { Effect: 'Allow', Principal: { AWS: '*' }, Action: 's3:*', Resource: '*' },
      }),
    },
    {
      policy: JSON.stringify({
        Statement: [{ Effect: 'Deny', Principal: '*', Action: 's3:*', Resource: '*' }],
      }),
    },
  ],
  [
    'security.s3_public_access_block_off',
    'aws_s3_bucket_public_access_block',
    {
      block_public_acls: true,
      block_public_policy: false,
      ignore_public_acls: true,
      restrict_public_buckets: true,
    },
    {
      block_public_acls: true,
      block_public_policy: true,
      ignore_public_acls: true,
      restrict_public_buckets: true,
    },
  ],
  ['security.rds_public', 'aws_db_instance', { publicly_accessible: true }, { publicly_accessible: false }],
  ['security.rds_public', 'aws_rds_cluster_instance', { publicly_accessible: true }, {}],
  [
    'security.rds_public',
    'aws_redshift_cluster',
    { publicly_accessible: true },
    { publicly_accessible: false },
  ],
  ['security.rds_unencrypted', 'aws_db_instance', { storage_encrypted: false }, { storage_encrypted: true }],
  ['security.rds_unencrypted', 'aws_rds_cluster', { storage_encrypted: false }, { storage_encrypted: true }],
  ['security.ebs_unencrypted', 'aws_ebs_volume', { encrypted: false }, { encrypted: true }],
  ['security.ebs_unencrypted', 'aws_ebs_snapshot_copy', { encrypted: false }, { encrypted: true }],
  ['security.ebs_unencrypted', 'aws_ebs_encryption_by_default', { enabled: false }, { enabled: true }],
  [
    'security.ebs_unencrypted',
    'aws_instance',
    { root_block_device: [{ encrypted: false }] },
    { root_block_device: [{ encrypted: true }], ebs_block_device: [] },
  ],
  [
    'security.ebs_unencrypted',
    'aws_launch_template',
    { block_device_mappings: [{ ebs: [{ encrypted: false }] }] },
    { block_device_mappings: [{ ebs: [{ encrypted: true }] }] },
  ],
  ['security.storage_unencrypted', 'aws_efs_file_system', { encrypted: false }, { encrypted: true }],
  [
    'security.storage_unencrypted',
    'aws_elasticache_replication_group',
    { at_rest_encryption_enabled: false },
    { at_rest_encryption_enabled: true },
  ],
  [
    'security.ec2_imdsv1',
    'aws_instance',
    { metadata_options: [{ http_endpoint: 'enabled', http_tokens: 'optional' }] },
    { metadata_options: [{ http_endpoint: 'enabled', http_tokens: 'required' }] },
  ],
  [
    'security.ec2_imdsv1',
    'aws_launch_template',
    { metadata_options: [{ http_tokens: 'optional' }] },
    { metadata_options: [{ http_endpoint: 'disabled', http_tokens: 'optional' }] },
  ],
  [
    'security.iam_admin_star',
    'aws_iam_policy',
    { policy: policy('*') },
    { policy: policy('*', 'arn:aws:s3:::b') },
  ],
  [
    'security.iam_admin_star',
    'aws_iam_role',
    { inline_policy: [{ name: 'x', policy: policy(['*']) }] },
    { inline_policy: [{ name: 'x', policy: policy('s3:GetObject') }] },
  ],
  [
    'security.iam_service_star',
    'aws_iam_role_policy',
    { policy: policy(['s3:*', 'ec2:*']) },
    { policy: policy(['s3:GetObject']) },
  ],
  [
    'security.iam_service_star',
    'aws_iam_user_policy',
    { policy: policy('ec2:*') },
    { policy: policy('ec2:*', 'arn:aws:ec2:us-east-1:1:instance/i-1') },
  ],
  [
    'security.iam_star_action',
    'aws_iam_group_policy',
    { policy: policy('*', 'arn:aws:s3:::b') },
    { policy: policy('s3:List*', 'arn:aws:s3:::b') },
  ],
  ['security.cloudtrail_logging_off', 'aws_cloudtrail', { enable_logging: false }, { enable_logging: true }],
  ['security.kms_rotation_off', 'aws_kms_key', { enable_key_rotation: false }, { enable_key_rotation: true }],
  [
    'security.kms_rotation_off',
    'aws_kms_key',
    { enable_key_rotation: false, customer_master_key_spec: 'SYMMETRIC_DEFAULT' },
    { enable_key_rotation: false, customer_master_key_spec: 'RSA_2048' },
  ],
  // KMS cannot rotate HMAC keys: none is asked to.
  [
    'security.kms_rotation_off',
    'aws_kms_key',
    { enable_key_rotation: false, key_usage: 'ENCRYPT_DECRYPT' },
    { enable_key_rotation: false, customer_master_key_spec: 'HMAC_256', key_usage: 'GENERATE_VERIFY_MAC' },
  ],
  // Every other type a check names, one positive and one negative each.
  [
    'security.sg_all_ports_open',
    'aws_default_security_group',
    ingress({ protocol: 'tcp', from_port: 0, to_port: 65535 }),
    ingress({ protocol: 'tcp', from_port: 0, to_port: 65535, self: true, cidr_blocks: [] }),
  ],
  [
    'security.sg_rdp_open',
    'aws_default_security_group',
    ingress({ from_port: 3389, to_port: 3389, ipv6_cidr_blocks: ['::/0'], cidr_blocks: [] }),
    ingress({ from_port: 3389, to_port: 3389, cidr_blocks: ['10.0.0.0/8'] }),
  ],
  [
    'security.sg_rdp_open',
    'aws_security_group_rule',
    { type: 'ingress', cidr_blocks: ['0.0.0.0/0'], protocol: 'tcp', from_port: 3389, to_port: 3389 },
    { type: 'egress', cidr_blocks: ['0.0.0.0/0'], protocol: 'tcp', from_port: 3389, to_port: 3389 },
  ],
  [
    'security.s3_public_access_block_off',
    'aws_s3_account_public_access_block',
    {
      block_public_acls: false,
      block_public_policy: true,
      ignore_public_acls: true,
      restrict_public_buckets: true,
    },
    {
      block_public_acls: true,
      block_public_policy: true,
      ignore_public_acls: true,
      restrict_public_buckets: true,
    },
  ],
  [
    'security.rds_public',
    'aws_dms_replication_instance',
    { publicly_accessible: true },
    { publicly_accessible: false },
  ],
  [
    'security.rds_unencrypted',
    'aws_neptune_cluster',
    { storage_encrypted: false },
    { storage_encrypted: true },
  ],
  [
    'security.rds_unencrypted',
    'aws_docdb_cluster',
    { storage_encrypted: false },
    { storage_encrypted: true },
  ],
  [
    'security.rds_unencrypted',
    'aws_db_cluster_snapshot',
    { storage_encrypted: false },
    { storage_encrypted: true },
  ],
  [
    'security.rds_unencrypted',
    'aws_neptune_cluster_snapshot',
    { storage_encrypted: false },
    { storage_encrypted: true },
  ],
  // Aurora Serverless v1 storage is always encrypted (CKV_AWS_96).
  [
    'security.rds_unencrypted',
    'aws_rds_cluster',
    { storage_encrypted: false, engine_mode: 'provisioned' },
    { storage_encrypted: false, engine_mode: 'serverless' },
  ],
  [
    'security.ebs_unencrypted',
    'aws_launch_configuration',
    { root_block_device: [{ encrypted: true }], ebs_block_device: [{ encrypted: false }] },
    { root_block_device: [{ encrypted: true }], ebs_block_device: [{ encrypted: true }] },
  ],
  ['security.ebs_unencrypted', 'aws_ami_copy', { encrypted: false }, { encrypted: true }],
  [
    'security.ebs_unencrypted',
    'aws_ami',
    { ebs_block_device: [{ device_name: '/dev/xvda', encrypted: false }] },
    { ebs_block_device: [{ device_name: '/dev/xvda', encrypted: false, snapshot_id: 'snap-1' }] },
  ],
  ['security.storage_unencrypted', 'aws_redshift_cluster', { encrypted: false }, { encrypted: true }],
  [
    'security.storage_unencrypted',
    'aws_elasticsearch_domain',
    { encrypt_at_rest: [{ enabled: false }] },
    { encrypt_at_rest: [{ enabled: true }] },
  ],
  [
    'security.storage_unencrypted',
    'aws_opensearch_domain',
    { encrypt_at_rest: [{ enabled: false, kms_key_id: '' }] },
    { encrypt_at_rest: [{ enabled: true }] },
  ],
  [
    'security.ec2_imdsv1',
    'aws_launch_configuration',
    { metadata_options: [{ http_endpoint: 'enabled', http_tokens: 'optional' }] },
    { metadata_options: [{ http_endpoint: 'enabled', http_tokens: 'required' }] },
  ],
  [
    'security.iam_admin_star',
    'aws_iam_role_policy',
    { policy: policy('*') },
    { policy: policy('*', 'arn:aws:s3:::b/*') },
  ],
  [
    'security.iam_admin_star',
    'aws_iam_user_policy',
    { policy: policy(['s3:GetObject', '*']) },
    { policy: policy(['s3:GetObject']) },
  ],
  [
    'security.iam_admin_star',
    'aws_iam_group_policy',
    { policy: policy('*', ['arn:aws:s3:::b', '*']) },
    { policy: JSON.stringify({ Statement: [{ Effect: 'Deny', Action: '*', Resource: '*' }] }) },
  ],
  [
    'security.iam_admin_star',
    'aws_ssoadmin_permission_set_inline_policy',
    { inline_policy: policy('*') },
    { inline_policy: policy('ec2:Describe*') },
  ],
  [
    'security.iam_service_star',
    'aws_iam_policy',
    { policy: policy('iam:*') },
    { policy: policy('iam:Get*') },
  ],
  [
    'security.iam_service_star',
    'aws_iam_group_policy',
    { policy: policy(['kms:*']) },
    { policy: policy(['kms:*'], 'arn:aws:kms:eu-west-1:1:key/k') },
  ],
  [
    'security.iam_service_star',
    'aws_iam_role',
    { inline_policy: [{ name: 'x', policy: policy('dynamodb:*') }] },
    { inline_policy: [{ name: 'x', policy: policy('dynamodb:GetItem') }] },
  ],
  [
    'security.iam_service_star',
    'aws_ssoadmin_permission_set_inline_policy',
    { inline_policy: policy('s3:*') },
    { inline_policy: policy('s3:*', 'arn:aws:s3:::b/*') },
  ],
  [
    'security.iam_star_action',
    'aws_iam_policy',
    { policy: policy('*', 'arn:aws:s3:::b/*') },
    { policy: policy('s3:*', 'arn:aws:s3:::b/*') },
  ],
  [
    'security.iam_star_action',
    'aws_iam_role_policy',
    { policy: policy(['*'], ['arn:aws:sqs:eu-west-1:1:q']) },
    { policy: policy(['sqs:SendMessage'], ['arn:aws:sqs:eu-west-1:1:q']) },
  ],
  [
    'security.iam_star_action',
    'aws_iam_user_policy',
    { policy: policy('*', 'arn:aws:s3:::b') },
    { policy: JSON.stringify({ Statement: [{ Effect: 'Deny', Action: '*', Resource: 'arn:aws:s3:::b' }] }) },
  ],
  [
    'security.iam_star_action',
    'aws_iam_role',
    { inline_policy: [{ name: 'x', policy: policy('*', 'arn:aws:s3:::b') }] },
    { inline_policy: [{ name: 'x', policy: policy('s3:ListBucket', 'arn:aws:s3:::b') }] },
  ],
  [
    'security.iam_star_action',
    'aws_ssoadmin_permission_set_inline_policy',
    { inline_policy: policy('*', 'arn:aws:s3:::b') },
    { inline_policy: policy('s3:ListBucket', 'arn:aws:s3:::b') },
  ],
  // ---- logging (Checkov's LOGGING checks) ----
  [
    'security.cloudtrail_log_validation_off',
    'aws_cloudtrail',
    { name: 't', enable_logging: true, enable_log_file_validation: false },
    { name: 't', enable_logging: true, enable_log_file_validation: true },
  ],
  [
    'security.s3_access_logging_off',
    'aws_s3_bucket',
    { bucket: 'data', logging: [] },
    { bucket: 'data', logging: [{ target_bucket: 'logs', target_prefix: 'log/' }] },
  ],
  [
    'security.lb_access_logs_off',
    'aws_lb',
    { load_balancer_type: 'application', access_logs: [{ bucket: 'logs', enabled: false }] },
    { load_balancer_type: 'application', access_logs: [{ bucket: 'logs', enabled: true }] },
  ],
  [
    'security.lb_access_logs_off',
    'aws_alb',
    { load_balancer_type: 'network', access_logs: [] },
    { load_balancer_type: 'gateway', access_logs: [] },
  ],
  [
    'security.lb_access_logs_off',
    'aws_elb',
    { name: 'web', access_logs: [] },
    { name: 'web', access_logs: [{ bucket: 'logs', interval: 60 }] },
  ],
  [
    'security.eks_control_plane_logging_off',
    'aws_eks_cluster',
    { name: 'k', enabled_cluster_log_types: ['api', 'audit'] },
    {
      name: 'k',
      enabled_cluster_log_types: ['api', 'audit', 'authenticator', 'controllerManager', 'scheduler'],
    },
  ],
  [
    'security.rds_log_exports_off',
    'aws_db_instance',
    { engine: 'postgres', storage_encrypted: true, enabled_cloudwatch_logs_exports: null },
    { engine: 'postgres', storage_encrypted: true, enabled_cloudwatch_logs_exports: ['postgresql'] },
  ],
  [
    'security.apigw_access_logs_off',
    'aws_api_gateway_stage',
    { stage_name: 'prod', access_log_settings: [] },
    {
      stage_name: 'prod',
      access_log_settings: [{ destination_arn: 'arn:aws:logs:us-east-1:1:log-group:a' }],
    },
  ],
  [
    'security.apigw_access_logs_off',
    'aws_apigatewayv2_stage',
    { name: '$default', access_log_settings: null },
    // The destination is a log group of the same plan: Terraform knows its ARN only after apply.
    { name: '$default', access_log_settings: [{ format: '$context.requestId' }] },
  ],
  [
    'security.redshift_logging_off',
    'aws_redshift_cluster',
    { cluster_identifier: 'dw', encrypted: true, logging: [{ enable: false }] },
    { cluster_identifier: 'dw', encrypted: true, logging: [{ enable: true, bucket_name: 'logs' }] },
  ],
  [
    'security.vpc_flow_logs_off',
    'aws_vpc',
    { id: 'vpc-1', cidr_block: '10.0.0.0/16' },
    { id: 'vpc-2', cidr_block: '10.0.0.0/16' },
    withAttached('aws_flow_log', ['vpc-2']),
  ],
];

const ids = (type: string, after: Record<string, unknown>, ctx?: Ctx) =>
  failedPlanChecks(type, after, ctx).map((c) => c.checkId);

describe('plan checks: a positive and a negative fixture for each', () => {
  it.each(FIXTURES)('%s on %s', (checkId, type, positive, negative, ctx) => {
    expect(ids(type, positive, ctx)).toContain(checkId);
    expect(ids(type, negative, ctx)).not.toContain(checkId);
  });

  it('every check and every type it names has fixtures', () => {
    const missing = PLAN_CHECKS.flatMap((c) =>
      c.types
        .filter((type) => !FIXTURES.some(([id, t]) => id === c.checkId && t === type))
        .map((type) => `${c.checkId} on ${type}`),
    );
    expect(missing).toEqual([]);
  });

  it('all ports is not also reported as SSH; a service wildcard is not reported when "*" is', () => {
    expect(ids('aws_security_group', ingress({ protocol: '-1' }))).toEqual(['security.sg_all_ports_open']);
    expect(ids('aws_iam_policy', { policy: policy(['*', 's3:*']) })).toEqual(['security.iam_admin_star']);
  });

  it('a complete after-state (JSON, or a create): an attribute Terraform knows only after apply counts as not set, as Checkov reads it', () => {
    const both = (type: string, after: Record<string, unknown>) => [
      failedPlanChecks(type, after).map((c) => c.checkId),
      failedPlanChecks(type, after, complete).map((c) => c.checkId),
    ];
    expect(both('aws_ebs_volume', { size: 8 })).toEqual([[], ['security.ebs_unencrypted']]);
    expect(both('aws_instance', { ami: 'ami-1' })).toEqual([
      [],
      ['security.ebs_unencrypted', 'security.ec2_imdsv1'],
    ]);
    expect(both('aws_db_instance', { engine: 'mysql' })).toEqual([
      [],
      ['security.rds_unencrypted', 'security.rds_log_exports_off'],
    ]);
    expect(both('aws_kms_key', { description: 'k' })).toEqual([[], ['security.kms_rotation_off']]);
    // Checkov's value checks fail a missing setting: a snapshot, a cluster, a domain, a public access block.
    expect(both('aws_neptune_cluster_snapshot', { db_cluster_identifier: 'n' })).toEqual([
      [],
      ['security.rds_unencrypted'],
    ]);
    expect(both('aws_elasticache_replication_group', { engine: 'redis' })).toEqual([
      [],
      ['security.storage_unencrypted'],
    ]);
    expect(both('aws_elasticsearch_domain', { domain_name: 'd' })).toEqual([
      [],
      ['security.storage_unencrypted'],
    ]);
    expect(both('aws_s3_bucket_public_access_block', { bucket: 'b', block_public_acls: true })).toEqual([
      [],
      ['security.s3_public_access_block_off'],
    ]);
    expect(both('aws_redshift_cluster', { encrypted: true })).toEqual([
      [],
      ['security.rds_public', 'security.redshift_logging_off'],
    ]);
    expect(
      failedPlanChecks(
        'aws_instance',
        { root_block_device: [{ encrypted: true }], metadata_options: [{ http_tokens: 'required' }] },
        complete,
      ),
    ).toEqual([]);
    // A device made from a snapshot inherits its encryption (CKV_AWS_8).
    expect(ids('aws_instance', { ebs_block_device: [{ encrypted: false, snapshot_id: 'snap-1' }] })).toEqual(
      [],
    );
  });
});

describe('plan checks on settings a separate resource carries (the whole plan)', () => {
  type Change = Parameters<typeof planAttachments>[0][number];
  const change = (type: string, after: Record<string, unknown> | null, o: Partial<Change> = {}): Change => ({
    mode: 'managed',
    type,
    action: 'create',
    before: null,
    after,
    afterUnknown: [],
    ...o,
  });
  const bucket = { bucket: 'data', logging: [] };
  const s3 = (changes: Change[]) =>
    ids('aws_s3_bucket', bucket, { complete: true, attached: planAttachments(changes, 'after') });

  it('CKV_AWS_18: an aws_s3_bucket_logging naming the bucket is its access logging', () => {
    expect(s3([])).toContain('security.s3_access_logging_off');
    expect(s3([change('aws_s3_bucket_logging', { bucket: 'data', target_bucket: 'logs' })])).not.toContain(
      'security.s3_access_logging_off',
    );
    // Another bucket's logging is not this one's.
    expect(s3([change('aws_s3_bucket_logging', { bucket: 'other', target_bucket: 'logs' })])).toContain(
      'security.s3_access_logging_off',
    );
    // A logging resource the plan deletes no longer logs the bucket.
    expect(
      s3([change('aws_s3_bucket_logging', null, { action: 'delete', before: { bucket: 'data' } })]),
    ).toContain('security.s3_access_logging_off');
  });

  it('a separate resource whose target Terraform knows only after apply could be any: nothing is flagged', () => {
    // `bucket = aws_s3_bucket.data.id` of a new bucket: absent from a JSON after-state, unknown in after_unknown.
    expect(
      s3([change('aws_s3_bucket_logging', { target_bucket: 'logs' }, { afterUnknown: [['bucket']] })]),
    ).toEqual([]);
    const vpc = (changes: Change[]) =>
      ids(
        'aws_vpc',
        { cidr_block: '10.0.0.0/16' },
        { complete: true, attached: planAttachments(changes, 'after') },
      );
    expect(vpc([])).toEqual(['security.vpc_flow_logs_off']);
    expect(vpc([change('aws_flow_log', { traffic_type: 'ALL' }, { afterUnknown: [['vpc_id']] })])).toEqual(
      [],
    );
    // A flow log of a subnet (vpc_id null) is not the VPC's.
    expect(
      vpc([change('aws_flow_log', { traffic_type: 'ALL', vpc_id: null, subnet_id: 'subnet-1' })]),
    ).toEqual(['security.vpc_flow_logs_off']);
  });

  it('CKV_AWS_71: provider v5 and later log a Redshift cluster with aws_redshift_logging', () => {
    const cluster = { cluster_identifier: 'dw', encrypted: true, publicly_accessible: false };
    expect(ids('aws_redshift_cluster', cluster, complete)).toEqual(['security.redshift_logging_off']);
    expect(
      ids('aws_redshift_cluster', cluster, {
        complete: true,
        attached: planAttachments([change('aws_redshift_logging', { cluster_identifier: 'dw' })], 'after'),
      }),
    ).toEqual([]);
  });

  it("Checkov's own edge cases of its logging fixtures, on a complete after-state", () => {
    // example_ELBv2AccessLogs "only_bucket": a block without `enabled` is off (the default is false).
    expect(ids('aws_lb', { access_logs: [{ bucket: 'logs', enabled: false }] }, complete)).toEqual([
      'security.lb_access_logs_off',
    ]);
    expect(ids('aws_alb', { access_logs: [{ bucket: 'logs' }] }, complete)).toEqual([
      'security.lb_access_logs_off',
    ]);
    // test_ELBAccessLogs: a classic block without `enabled` is on; no block is off.
    expect(ids('aws_elb', { access_logs: [{ bucket: 'logs' }] }, complete)).toEqual([]);
    expect(ids('aws_elb', { name: 'web' }, complete)).toEqual(['security.lb_access_logs_off']);
    // test_RedshiftClusterLogging "missing_2": a logging block without `enable`.
    expect(
      ids('aws_redshift_cluster', { encrypted: true, publicly_accessible: false, logging: [{}] }, complete),
    ).toEqual(['security.redshift_logging_off']);
    expect(ids('aws_eks_cluster', { name: 'k', enabled_cluster_log_types: null }, complete)).toEqual([
      'security.eks_control_plane_logging_off',
    ]);
    expect(ids('aws_cloudtrail', { name: 't', enable_logging: true }, complete)).toEqual([
      'security.cloudtrail_log_validation_off',
    ]);
  });

  it('only a complete after-state says a VPC has no flow log (a text update lists none it leaves alone)', () => {
    expect(ids('aws_vpc', { id: 'vpc-1', tags: { Name: 'x' } })).toEqual([]);
  });
});
