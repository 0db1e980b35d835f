/**
 * The inventory as every connector delivers it. Types and attribute names follow the AWS describe APIs
 * as Steampipe names them (aws_ec2_instance, instance_state, attachments, ...), so detectors and plan
 * review read one vocabulary whatever the source.
 */
export const RESOURCE_TYPES = [
  'aws_account',
  'aws_vpc',
  'aws_vpc_subnet',
  'aws_vpc_route_table',
  'aws_vpc_internet_gateway',
  'aws_vpc_nat_gateway',
  'aws_vpc_security_group',
  'aws_vpc_eip',
  'aws_ec2_instance',
  'aws_ec2_autoscaling_group',
  'aws_ec2_launch_template',
  'aws_ec2_application_load_balancer',
  'aws_ec2_target_group',
  'aws_ebs_volume',
  'aws_ebs_snapshot',
  'aws_rds_db_instance',
  'aws_rds_db_snapshot',
  'aws_s3_bucket',
  'aws_iam_user',
  'aws_iam_access_key',
  'aws_iam_role',
  'aws_iam_policy',
  'aws_iam_instance_profile',
  'aws_cloudtrail_trail',
  'aws_cloudwatch_alarm',
  'aws_cloudwatch_log_group',
  'aws_dynamodb_table',
  'aws_elasticache_replication_group',
  'aws_lambda_function',
  'aws_route53_record',
] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

export interface InventoryResource {
  type: ResourceType;
  /** The resource's ARN (or an ARN-shaped key where AWS has none): unique within a tenant. */
  arn: string;
  /** The id AWS uses for it: vol-…, i-…, sg-…, a bucket or user name. */
  nativeId: string;
  accountId: string;
  /** The region, or 'global' for IAM and other global services. */
  region: string;
  availabilityZone: string | null;
  name: string | null;
  tags: Record<string, string>;
  /** The resource as AWS describes it. */
  attributes: Record<string, unknown>;
  /** Measured size (storage in GiB, compute in vCPU), when the type has one. */
  sizeValue: number | null;
  sizeUnit: 'GiB' | 'vCPU' | 'IOPS' | null;
}

export const EDGE_KINDS = [
  'attached-to',
  'member-of',
  'routes-to',
  'targets',
  'uses-role',
  'depends-on',
  'protected-by',
  'monitors',
  'contains',
  'resolves-to',
] as const;
export type EdgeKind = (typeof EDGE_KINDS)[number];

export interface InventoryEdge {
  from: string; // ARN
  to: string; // ARN
  kind: EdgeKind;
  /** 'config' for what the provider states, 'terraform' for state dependencies, 'inferred:<how>' for guesses. */
  source: string;
  /** 1 for stated facts; below 1 for inferences. */
  confidence: number;
}

/** One resource's daily datapoint of a CloudWatch-style metric. */
export interface MetricPoint {
  arn: string;
  metric: string;
  day: string; // YYYY-MM-DD
  avg: number | null;
  max: number | null;
  sum: number | null;
}

/** One CUR-like daily cost line. */
export interface CostLine {
  arn: string;
  day: string; // YYYY-MM-DD
  productCode: string;
  usageType: string;
  unblendedCost: number;
}

/** A CloudTrail event or an alert, for drift attribution and incident timelines. */
export interface InventoryEvent {
  kind: 'cloudtrail' | 'alert';
  at: string; // ISO time
  name: string; // eventName, or the alert name
  actor: string | null; // userIdentity.arn
  sourceIp: string | null;
  fingerprint: string | null;
  severity: string | null;
  service: string | null;
  arns: string[];
  payload: Record<string, unknown>;
}

/**
 * Rows a connector may hand over without holding them all at once: an array, or a source the sync walks
 * (and may walk again) that knows how many rows it yields. A month of daily metric points and cost lines
 * is about 30 rows per resource, 3 million for a 100,000-resource estate: as objects that is most of a
 * sync's memory, so the demo environment generates them as the sync reads them.
 *
 * A source that yields each resource's rows together, resources in ARN order (JavaScript string order),
 * is written fastest: the sync writes rows in that order (it sorts arrays itself) because the tables'
 * primary keys lead with the ARN.
 */
export interface RowSource<T> extends Iterable<T> {
  readonly length: number;
}

/** The least-privilege IAM policy of the AWS connector (the repository's path): every action it calls. */
export const AWS_IAM_POLICY = 'docs/aws-iam-policy.json';

/**
 * How AWS answers in a region the account has not opted in to: EC2 says OptInRequired, other services
 * refuse the credentials there. A warning with one of these codes is a region skipped, not a permission missing.
 */
export const REGION_NOT_ENABLED_CODES: readonly string[] = [
  'OptInRequired',
  'AuthFailure',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
];

/** A part of a scan that could not be read: a denied call, or a region not enabled for the account. */
export interface CollectWarning {
  /** The IAM service prefix (ec2, s3, iam...). */
  service: string;
  /** The IAM action that was refused (`s3:GetBucketPolicy`), the one to add to the identity's policy. */
  action: string;
  /** The region asked, or 'global' for IAM and the S3 bucket list. */
  region: string;
  /** AWS's error code: AccessDenied, UnauthorizedOperation, OptInRequired... */
  code: string;
  message: string;
}

/** Resources of these types in this region ('*' for any) were not read: the sync must not call them deleted. */
export interface UnreadScope {
  region: string;
  types: ResourceType[];
}

/** What one sync of a connection observed. */
export interface CollectedInventory {
  /** The time the inventory describes (a demo environment's simulated clock; now for real ones). */
  observedAt: Date;
  resources: InventoryResource[];
  edges: InventoryEdge[];
  metrics: RowSource<MetricPoint>;
  costs: RowSource<CostLine>;
  events: InventoryEvent[];
  /** What could not be read; absent or empty when the whole connection was read. */
  warnings?: CollectWarning[];
  /** Where the previous inventory stays as it was, because this sync could not read it. */
  unread?: UnreadScope[];
  /** Requests the SDK sent again after throttling or a transient error (AWS only). */
  retries?: number;
}

/**
 * An observation as the sync takes it: like CollectedInventory, but resources and edges may be built as
 * they are read (a whale's demo environment, about 1,000,000 resources, is never held whole). Every
 * CollectedInventory is one.
 */
export interface InventoryObservation extends Omit<CollectedInventory, 'resources' | 'edges'> {
  resources: RowSource<InventoryResource>;
  edges: RowSource<InventoryEdge>;
}

export interface CollectProgress {
  (phase: string, done: number, total: number | null): void;
}

/** A source of inventory: the demo environment, Terraform state, or an AWS account (read-only). */
export interface Connector {
  readonly kind: 'demo' | 'terraform_state' | 'aws';
  collect(options: { signal?: AbortSignal; onProgress?: CollectProgress }): Promise<CollectedInventory>;
}
