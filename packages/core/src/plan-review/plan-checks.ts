/**
 * Plan checks: conditions on a resource as the plan leaves it, stated over Terraform's own values
 * (the after-state of `terraform show -json`, or of the text plan), for every resource type that
 * carries the setting, inline or as a separate resource. CONDITIONS (conditions.ts) ask the
 * detectors' questions of resources the inventory models and need live context (a group in use);
 * these need none, so a plan that creates an open group, a public bucket or a wildcard policy is
 * flagged before anything exists. Where a detector has the same question, the check id is the
 * detector's. Checkov's AWS checks (checkov/terraform/checks/resource/aws/) are the floor for what
 * each one catches; plan-checks.test.ts has a positive and a negative fixture for each.
 */

type Values = Record<string, unknown>;

export interface PlanCheck {
  checkId: string;
  domain: 'security' | 'sre';
  /** Terraform resource types that carry the setting. */
  types: string[];
  title: string;
  severity: 'critical' | 'high' | 'medium' | 'low';
  /** What Checkov calls the same check (its ids), for the annotation's detail. */
  checkov: string[];
  test(after: Values, type: string, ctx: PlanCheckContext): boolean;
}

export interface PlanCheckContext {
  /**
   * The after-state lists every attribute (a JSON plan, or a text plan's create): an attribute absent
   * from it is one Terraform knows only after apply, which Checkov reads as not set. A text plan's
   * update shows only what changes, so there an absent attribute says nothing.
   */
  complete: boolean;
  /**
   * The separate resources of the plan that carry a setting for another one (an
   * `aws_s3_bucket_logging` for a bucket, an `aws_flow_log` for a VPC), on the same side of the plan
   * as the values asked about; see planAttachments. Absent: none known.
   */
  attached?: PlanAttachments;
}

// ---- separate resources that carry a setting for another --------------------------------------

/** The resource type that carries a setting for another, and its attribute naming that other one. */
const ATTACHERS: Record<string, string> = {
  aws_s3_bucket_logging: 'bucket',
  aws_flow_log: 'vpc_id',
  aws_redshift_logging: 'cluster_identifier',
};

export interface Attached {
  /** The identifiers (bucket name, VPC id, cluster identifier) the plan's resources of the type name. */
  known: Set<string>;
  /** One of them names a value Terraform knows only after apply (`aws_s3_bucket.x.id` of a new bucket). */
  unknown: boolean;
}
export type PlanAttachments = Record<string, Attached>;

interface AttachingChange {
  mode: string;
  type: string;
  action: string;
  before: Values | null;
  after: Values | null;
  afterUnknown: Array<Array<string | number>>;
}

/**
 * What the plan's separate resources attach to, before or after it (the whole plan, as Checkov's
 * connection checks read it: CKV_AWS_18's aws_s3_bucket_logging, CKV2_AWS_11's aws_flow_log). A
 * reference Terraform knows only after apply could be to any resource, so it makes `unknown` true and
 * the checks that ask then flag nothing rather than guess.
 */
export function planAttachments(changes: AttachingChange[], side: 'before' | 'after'): PlanAttachments {
  const out: PlanAttachments = {};
  for (const c of changes) {
    const attr = ATTACHERS[c.type];
    if (!attr || c.mode !== 'managed' || c.action === 'read') continue;
    const values = side === 'before' ? c.before : c.after;
    if (!values) continue;
    const a = (out[c.type] ??= { known: new Set(), unknown: false });
    const v = values[attr];
    const unknownAfter =
      side === 'after' && (v === undefined || c.afterUnknown.some((p) => p.length === 1 && p[0] === attr));
    if (unknownAfter) a.unknown = true;
    else if (typeof v === 'string' && v) a.known.add(v);
  }
  return out;
}

/** A resource of `type` in the plan carries the setting for the one with these identifiers, or may. */
const attachedTo = (ctx: PlanCheckContext, type: string, ids: unknown[]) => {
  const a = ctx.attached?.[type];
  return !!a && (a.unknown || ids.some((id) => typeof id === 'string' && a.known.has(id)));
};

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
const records = (v: unknown): Values[] =>
  list(v).filter((x): x is Values => !!x && typeof x === 'object' && !Array.isArray(x));
const strings = (v: unknown): string[] => list(v).map((x) => String(x));

// ---- security group ingress ----------------------------------------------------------------

interface Ingress {
  cidrs: string[];
  protocol: string;
  from: number;
  to: number;
  /** Limited to the group itself or to prefix lists: never the world. */
  limited: boolean;
}

const WORLD = new Set(['0.0.0.0/0', '::/0', '0000:0000:0000:0000:0000:0000:0000:0000/0']);

/**
 * Every ingress rule a resource declares, in one shape, whichever resource type declares it. As
 * Checkov's AbsSecurityGroupUnrestrictedIngress reads them: ports 0 to 0 stand for all ports.
 */
function ingressOf(after: Values, type: string): Ingress[] {
  const rule = (r: Values, cidrs: string[], protocol: unknown): Ingress => {
    const from = Number(r.from_port ?? -1);
    let to = Number(r.to_port ?? -1);
    if (from === 0 && to === 0) to = 65535;
    return {
      cidrs,
      protocol: String(protocol ?? '').toLowerCase(),
      from,
      to,
      limited: r.self === true || strings(r.prefix_list_ids).length > 0 || !!r.prefix_list_id,
    };
  };
  switch (type) {
    case 'aws_security_group':
    case 'aws_default_security_group':
      return records(after.ingress).map((r) =>
        rule(r, [...strings(r.cidr_blocks), ...strings(r.ipv6_cidr_blocks)], r.protocol),
      );
    case 'aws_security_group_rule':
      return after.type === 'ingress'
        ? [rule(after, [...strings(after.cidr_blocks), ...strings(after.ipv6_cidr_blocks)], after.protocol)]
        : [];
    case 'aws_vpc_security_group_ingress_rule':
      return [rule(after, [...strings(after.cidr_ipv4), ...strings(after.cidr_ipv6)], after.ip_protocol)];
    default:
      return [];
  }
}

const ALL_PROTOCOLS = new Set(['-1', 'all']);
const openToWorld = (r: Ingress) => !r.limited && r.cidrs.some((c) => WORLD.has(c));
/** Every port: protocol -1 (all), a range from 0 (or -1) to 65535, or Checkov's port -1 (CKV_AWS_277). */
const allPorts = (r: Ingress) =>
  ALL_PROTOCOLS.has(r.protocol) || (r.from <= 0 && r.to >= 65535) || (r.from <= -1 && r.to >= -1);
/** The port is inside the rule's range (containment: 0-1024 admits 22), whatever the protocol, as Checkov. */
const coversPort = (port: number) => (r: Ingress) => r.from <= port && r.to >= port;

const SG_TYPES = [
  'aws_security_group',
  'aws_default_security_group',
  'aws_security_group_rule',
  'aws_vpc_security_group_ingress_rule',
];

const adminPort = (port: number, name: string, checkId: string, checkov: string[]): PlanCheck => ({
  checkId,
  domain: 'security',
  types: SG_TYPES,
  title: `Security group open to the Internet on ${name} (${port})`,
  severity: 'high',
  checkov,
  test: (after, type) =>
    ingressOf(after, type).some((r) => openToWorld(r) && !allPorts(r) && coversPort(port)(r)),
});

// ---- S3 -------------------------------------------------------------------------------------

const PUBLIC_ACLS = new Set(['public-read', 'public-read-write', 'website', 'authenticated-read']);
const ALL_USERS = /acs\.amazonaws\.com\/groups\/global\/(AllUsers|AuthenticatedUsers)$/;

function parsePolicy(policy: unknown): Values | null {
  let doc = policy;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch {
      return null;
    }
  }
  return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Values) : null;
}

const statements = (policy: unknown): Values[] => records(parsePolicy(policy)?.Statement);
/** Effect Allow (Checkov reads a statement without an Effect as Allow). */
const allows = (s: Values) => s.Effect === undefined || s.Effect === 'Allow';

/** A statement any principal is granted, without a condition narrowing it (Principal "*" or {AWS: "*"}). */
const anyPrincipal = (s: Values) => {
  const p = s.Principal;
  const open = p === '*' || (!!p && typeof p === 'object' && strings((p as Values).AWS).includes('*'));
  return open && (s.Condition === undefined || s.Condition === null);
};

/** Action "*" or a whole service ("s3:*") on Resource "*". */
const wildcardOnStar = (services: boolean) => (s: Values) =>
  allows(s) &&
  strings(s.Resource).includes('*') &&
  strings(s.Action).some((a) => a === '*' || (services && /^[A-Za-z0-9-]+:\*$/.test(a)));

/** Action "*", on any resource (CKV_AWS_63). */
const starAction = (s: Values) => allows(s) && strings(s.Action).includes('*');

const POLICY_TYPES = ['aws_iam_policy', 'aws_iam_role_policy', 'aws_iam_user_policy', 'aws_iam_group_policy'];
/** IAM Identity Center's permission set: its policy document is the string `inline_policy` (CKV_AWS_62, 63). */
const SSO_INLINE = 'aws_ssoadmin_permission_set_inline_policy';
const IAM_TYPES = [...POLICY_TYPES, SSO_INLINE, 'aws_iam_role'];
const policiesOf = (after: Values, type: string): unknown[] =>
  type === 'aws_iam_role'
    ? records(after.inline_policy).map((p) => p.policy)
    : type === SSO_INLINE
      ? [after.inline_policy]
      : POLICY_TYPES.includes(type)
        ? [after.policy]
        : [];

/**
 * A setting that must be `true`: `false` fails, and so does a missing value where the after-state is
 * complete (Checkov's value checks fail a missing attribute; in a complete after-state it is one
 * Terraform knows only after apply).
 */
const notTrue = (v: unknown, ctx: PlanCheckContext) => v === false || (ctx.complete && v !== true);

/**
 * A setting that must be present: an explicit null or empty list fails, and so does a missing value
 * where the after-state is complete (as notTrue).
 */
const unset = (v: unknown, ctx: PlanCheckContext) =>
  v === null || (Array.isArray(v) && v.length === 0) || (v === undefined && ctx.complete);

/** The five EKS control-plane log types CKV_AWS_37 asks for, all of them. */
const EKS_LOG_TYPES = ['api', 'audit', 'authenticator', 'controllerManager', 'scheduler'];

/** A block device not encrypted and not made from a snapshot (whose encryption it inherits). */
const unencryptedIn = (v: unknown) => records(v).some((x) => x.encrypted === false && !x.snapshot_id);

export const PLAN_CHECKS: PlanCheck[] = [
  {
    checkId: 'security.sg_all_ports_open',
    domain: 'security',
    types: SG_TYPES,
    title: 'Security group open to the Internet on all ports',
    severity: 'critical',
    checkov: ['CKV_AWS_277'],
    test: (after, type) => ingressOf(after, type).some((r) => openToWorld(r) && allPorts(r)),
  },
  adminPort(22, 'SSH', 'security.sg_ssh_open', ['CKV_AWS_24']),
  adminPort(3389, 'RDP', 'security.sg_rdp_open', ['CKV_AWS_25']),
  {
    checkId: 'security.s3_public_acl',
    domain: 'security',
    types: ['aws_s3_bucket', 'aws_s3_bucket_acl'],
    title: 'S3 bucket readable by anyone (public ACL)',
    severity: 'high',
    checkov: ['CKV_AWS_20', 'CKV_AWS_57'],
    test: (after) =>
      PUBLIC_ACLS.has(String(after.acl)) ||
      records(after.access_control_policy).some((acp) =>
        records(acp.grant).some((g) => records(g.grantee).some((e) => ALL_USERS.test(String(e.uri ?? '')))),
      ),
  },
  {
    checkId: 'security.s3_public_policy',
    domain: 'security',
    types: ['aws_s3_bucket', 'aws_s3_bucket_policy'],
    title: 'S3 bucket policy grants access to any principal',
    severity: 'high',
    checkov: ['CKV_AWS_70'],
    test: (after) => statements(after.policy).some((s) => allows(s) && anyPrincipal(s)),
  },
  {
    checkId: 'security.s3_public_access_block_off',
    domain: 'security',
    types: ['aws_s3_bucket_public_access_block', 'aws_s3_account_public_access_block'],
    title: 'S3 public access block turned off',
    severity: 'medium',
    checkov: ['CKV_AWS_53', 'CKV_AWS_54', 'CKV_AWS_55', 'CKV_AWS_56'],
    // CKV_AWS_53-56: each setting must be true; a missing one fails (the provider's default is false).
    test: (after, _type, ctx) =>
      ['block_public_acls', 'block_public_policy', 'ignore_public_acls', 'restrict_public_buckets'].some(
        (k) => notTrue(after[k], ctx),
      ),
  },
  {
    checkId: 'security.rds_public',
    domain: 'security',
    types: [
      'aws_db_instance',
      'aws_rds_cluster_instance',
      'aws_redshift_cluster',
      'aws_dms_replication_instance',
    ],
    title: 'Database publicly accessible',
    severity: 'high',
    checkov: ['CKV_AWS_17', 'CKV_AWS_87', 'CKV_AWS_89'],
    // CKV_AWS_87 expects Redshift's `false` (a missing value fails); the others forbid `true`.
    test: (after, type, ctx) =>
      after.publicly_accessible === true ||
      (type === 'aws_redshift_cluster' && ctx.complete && after.publicly_accessible !== false),
  },
  {
    checkId: 'security.rds_unencrypted',
    domain: 'security',
    types: [
      'aws_db_instance',
      'aws_rds_cluster',
      'aws_neptune_cluster',
      'aws_docdb_cluster',
      'aws_db_cluster_snapshot',
      'aws_neptune_cluster_snapshot',
    ],
    title: 'Database storage not encrypted',
    severity: 'medium',
    checkov: ['CKV_AWS_16', 'CKV_AWS_96', 'CKV_AWS_44', 'CKV_AWS_74', 'CKV_AWS_146', 'CKV_AWS_279'],
    test: (after, type, ctx) =>
      // Aurora Serverless (v1) storage is always encrypted (CKV_AWS_96).
      !(type === 'aws_rds_cluster' && after.engine_mode === 'serverless') &&
      notTrue(after.storage_encrypted, ctx),
  },
  {
    checkId: 'security.ebs_unencrypted',
    domain: 'security',
    types: [
      'aws_ebs_volume',
      'aws_ebs_snapshot_copy',
      'aws_ebs_encryption_by_default',
      'aws_instance',
      'aws_launch_configuration',
      'aws_launch_template',
      'aws_ami',
      'aws_ami_copy',
    ],
    title: 'Block storage not encrypted',
    severity: 'medium',
    checkov: ['CKV_AWS_3', 'CKV_AWS_8', 'CKV_AWS_106', 'CKV_AWS_204', 'CKV_AWS_235'],
    test: (after, type, ctx) => {
      if (type === 'aws_ebs_encryption_by_default') return after.enabled === false;
      if (type === 'aws_ebs_volume' || type === 'aws_ebs_snapshot_copy' || type === 'aws_ami_copy')
        return notTrue(after.encrypted, ctx);
      // CKV_AWS_204: an image's device not made from a snapshot must say it is encrypted.
      if (type === 'aws_ami')
        return records(after.ebs_block_device).some((d) => !d.snapshot_id && notTrue(d.encrypted, ctx));
      if (type === 'aws_launch_template')
        return records(after.block_device_mappings).some((m) => unencryptedIn(m.ebs));
      // CKV_AWS_8: no root device in the after-state fails too (its encryption is the default's).
      if (ctx.complete && !records(after.root_block_device).length) return true;
      return unencryptedIn(after.root_block_device) || unencryptedIn(after.ebs_block_device);
    },
  },
  // No S3 check: every bucket is encrypted (SSE-S3) since January 2023 and no setting turns it off.
  // Checkov's CKV_AWS_19 passes a bucket without an encryption configuration and fails only an algorithm
  // other than AES256 or aws:kms, i.e. aws:kms:dsse, which is encrypted twice.
  {
    checkId: 'security.storage_unencrypted',
    domain: 'security',
    types: [
      'aws_efs_file_system',
      'aws_redshift_cluster',
      'aws_elasticache_replication_group',
      'aws_elasticsearch_domain',
      'aws_opensearch_domain',
    ],
    title: 'Storage not encrypted at rest',
    severity: 'medium',
    checkov: ['CKV_AWS_42', 'CKV_AWS_64', 'CKV_AWS_29', 'CKV_AWS_5'],
    test: (after, type, ctx) => {
      if (type === 'aws_elasticache_replication_group') return notTrue(after.at_rest_encryption_enabled, ctx);
      if (type === 'aws_elasticsearch_domain' || type === 'aws_opensearch_domain')
        return notTrue(records(after.encrypt_at_rest)[0]?.enabled, ctx);
      return notTrue(after.encrypted, ctx);
    },
  },
  {
    checkId: 'security.ec2_imdsv1',
    domain: 'security',
    types: ['aws_instance', 'aws_launch_template', 'aws_launch_configuration'],
    title: 'Instance metadata allows IMDSv1',
    severity: 'medium',
    checkov: ['CKV_AWS_79'],
    // CKV_AWS_79: no metadata options fails (the default allows IMDSv1), endpoint disabled passes.
    test: (after, _type, ctx) => {
      const m = records(after.metadata_options)[0];
      if (!m) return ctx.complete;
      return (
        m.http_endpoint !== 'disabled' && m.http_tokens !== 'required' && (ctx.complete || 'http_tokens' in m)
      );
    },
  },
  {
    checkId: 'security.iam_admin_star',
    domain: 'security',
    types: IAM_TYPES,
    title: 'Policy allows every action on every resource',
    severity: 'critical',
    checkov: ['CKV_AWS_62', 'CKV_AWS_63', 'CKV_AWS_1'],
    test: (after, type) => policiesOf(after, type).some((p) => statements(p).some(wildcardOnStar(false))),
  },
  {
    checkId: 'security.iam_service_star',
    domain: 'security',
    types: IAM_TYPES,
    title: 'Policy allows every action of a service ("s3:*") on every resource',
    severity: 'high',
    checkov: ['CKV_AWS_289', 'CKV_AWS_290', 'CKV_AWS_355'],
    test: (after, type) =>
      policiesOf(after, type).some(
        (p) => statements(p).some(wildcardOnStar(true)) && !statements(p).some(wildcardOnStar(false)),
      ),
  },
  {
    checkId: 'security.iam_star_action',
    domain: 'security',
    types: IAM_TYPES,
    title: 'Policy allows every action ("*") on some resources',
    severity: 'high',
    checkov: ['CKV_AWS_63'],
    test: (after, type) =>
      policiesOf(after, type).some(
        (p) => statements(p).some(starAction) && !statements(p).some(wildcardOnStar(false)),
      ),
  },
  {
    checkId: 'security.cloudtrail_logging_off',
    domain: 'security',
    types: ['aws_cloudtrail'],
    title: 'CloudTrail logging turned off',
    severity: 'high',
    checkov: ['CKV_AWS_251'],
    test: (after) => after.enable_logging === false,
  },
  {
    checkId: 'security.cloudtrail_log_validation_off',
    domain: 'security',
    types: ['aws_cloudtrail'],
    title: 'CloudTrail log file validation turned off',
    severity: 'low',
    checkov: ['CKV_AWS_36'],
    test: (after, _type, ctx) => notTrue(after.enable_log_file_validation, ctx),
  },
  {
    checkId: 'security.s3_access_logging_off',
    domain: 'security',
    types: ['aws_s3_bucket'],
    title: 'S3 bucket without access logging',
    severity: 'low',
    checkov: ['CKV_AWS_18'],
    // CKV_AWS_18 (a graph check): a `logging` block on the bucket, or an aws_s3_bucket_logging (provider
    // v4 and later) attached to it. A `logging` block whose target Terraform knows only after apply is set.
    test: (after, _type, ctx) =>
      records(after.logging).length === 0 &&
      unset(after.logging, ctx) &&
      !attachedTo(ctx, 'aws_s3_bucket_logging', [after.bucket, after.id]),
  },
  {
    checkId: 'security.lb_access_logs_off',
    domain: 'security',
    types: ['aws_lb', 'aws_alb', 'aws_elb'],
    title: 'Load balancer without access logs',
    severity: 'low',
    checkov: ['CKV_AWS_91', 'CKV_AWS_92'],
    test: (after, type, ctx) => {
      const logs = records(after.access_logs)[0];
      // CKV_AWS_92 (classic): no access_logs block fails; a block without `enabled` is on (its default).
      if (type === 'aws_elb') return logs ? logs.enabled === false : unset(after.access_logs, ctx);
      // CKV_AWS_91: access_logs.enabled must be true; a Gateway Load Balancer has no access logs.
      if (after.load_balancer_type === 'gateway') return false;
      return logs ? notTrue(logs.enabled, ctx) : unset(after.access_logs, ctx);
    },
  },
  {
    checkId: 'security.eks_control_plane_logging_off',
    domain: 'security',
    types: ['aws_eks_cluster'],
    title: 'EKS control-plane logging not enabled for every log type',
    severity: 'low',
    checkov: ['CKV_AWS_37'],
    test: (after, _type, ctx) => {
      const v = after.enabled_cluster_log_types;
      if (v === undefined) return ctx.complete;
      const types = strings(v);
      return !EKS_LOG_TYPES.every((t) => types.includes(t));
    },
  },
  {
    checkId: 'security.rds_log_exports_off',
    domain: 'security',
    types: ['aws_db_instance'],
    title: 'Database exports no logs to CloudWatch',
    severity: 'low',
    checkov: ['CKV_AWS_129'],
    test: (after, _type, ctx) => unset(after.enabled_cloudwatch_logs_exports, ctx),
  },
  {
    checkId: 'security.apigw_access_logs_off',
    domain: 'security',
    types: ['aws_api_gateway_stage', 'aws_apigatewayv2_stage'],
    title: 'API Gateway stage without access logs',
    severity: 'low',
    checkov: ['CKV_AWS_76'],
    // CKV_AWS_76: access_log_settings.destination_arn set; it is required in the block, so a block whose
    // destination Terraform knows only after apply (a log group of the same plan) is set.
    test: (after, _type, ctx) =>
      records(after.access_log_settings).length === 0 && unset(after.access_log_settings, ctx),
  },
  {
    checkId: 'security.redshift_logging_off',
    domain: 'security',
    types: ['aws_redshift_cluster'],
    title: 'Redshift cluster audit logging off',
    severity: 'low',
    checkov: ['CKV_AWS_71'],
    // CKV_AWS_71: logging.enable must be true. Provider v5 moved the setting to aws_redshift_logging
    // (and v6 removed the block), so a cluster that resource names is logged.
    test: (after, _type, ctx) => {
      const logging = records(after.logging)[0];
      if (logging?.enable === true) return false;
      if (attachedTo(ctx, 'aws_redshift_logging', [after.cluster_identifier, after.id])) return false;
      return logging ? notTrue(logging.enable, ctx) : unset(after.logging, ctx);
    },
  },
  {
    checkId: 'security.vpc_flow_logs_off',
    domain: 'security',
    types: ['aws_vpc'],
    title: 'VPC without flow logs',
    severity: 'low',
    checkov: ['CKV2_AWS_11'],
    // CKV2_AWS_11 (a graph check): an aws_flow_log attached to the VPC. Only a complete after-state
    // says the plan has none: a text plan's update does not list the flow logs it leaves alone.
    test: (after, _type, ctx) => ctx.complete && !attachedTo(ctx, 'aws_flow_log', [after.id]),
  },
  {
    checkId: 'security.kms_rotation_off',
    domain: 'security',
    types: ['aws_kms_key'],
    title: 'KMS key without automatic rotation',
    severity: 'medium',
    checkov: ['CKV_AWS_7'],
    // KMS rotates symmetric encryption keys only; asymmetric and HMAC keys cannot be rotated. Checkov
    // (CKV_AWS_7) asks the spec list for an exact 'HMAC', which no real spec (HMAC_256, ...) is.
    test: (after, _type, ctx) =>
      notTrue(after.enable_key_rotation, ctx) &&
      String(after.customer_master_key_spec ?? 'SYMMETRIC_DEFAULT') === 'SYMMETRIC_DEFAULT',
  },
];

/** The plan checks a resource's after-state fails. */
export function failedPlanChecks(
  type: string,
  after: Values | null,
  ctx: PlanCheckContext = { complete: false },
): PlanCheck[] {
  if (!after) return [];
  return PLAN_CHECKS.filter((c) => c.types.includes(type) && c.test(after, type, ctx));
}
