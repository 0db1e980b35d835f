/**
 * The IAM action each SDK call needs: the service prefix of its client, and the operation's name,
 * except where IAM names the permission otherwise (S3's older names). docs/aws-iam-policy.json lists
 * these for every call the connector makes, and aws-iam-policy.test.ts keeps the two equal.
 */

/** The IAM service prefix of each SDK client the connector uses, by client class and by package. */
export const IAM_PREFIX_BY_CLIENT: Record<string, string> = {
  AutoScalingClient: 'autoscaling',
  CloudTrailClient: 'cloudtrail',
  CloudWatchClient: 'cloudwatch',
  CloudWatchLogsClient: 'logs',
  DynamoDBClient: 'dynamodb',
  EC2Client: 'ec2',
  ElastiCacheClient: 'elasticache',
  ElasticLoadBalancingV2Client: 'elasticloadbalancing',
  IAMClient: 'iam',
  RDSClient: 'rds',
  S3Client: 's3',
  STSClient: 'sts',
};

export const IAM_PREFIX_BY_PACKAGE: Record<string, string> = {
  '@aws-sdk/client-auto-scaling': 'autoscaling',
  '@aws-sdk/client-cloudtrail': 'cloudtrail',
  '@aws-sdk/client-cloudwatch': 'cloudwatch',
  '@aws-sdk/client-cloudwatch-logs': 'logs',
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/client-ec2': 'ec2',
  '@aws-sdk/client-elasticache': 'elasticache',
  '@aws-sdk/client-elastic-load-balancing-v2': 'elasticloadbalancing',
  '@aws-sdk/client-iam': 'iam',
  '@aws-sdk/client-rds': 'rds',
  '@aws-sdk/client-s3': 's3',
  '@aws-sdk/client-sts': 'sts',
};

/** Operations whose permission has another name (Service Authorization Reference, Amazon S3). */
const RENAMED: Record<string, string> = {
  's3:ListBuckets': 's3:ListAllMyBuckets',
  's3:GetPublicAccessBlock': 's3:GetBucketPublicAccessBlock',
  's3:GetBucketEncryption': 's3:GetEncryptionConfiguration',
  's3:GetBucketLifecycleConfiguration': 's3:GetLifecycleConfiguration',
};

/** Calls that need no permission: AWS answers GetCallerIdentity even when an explicit deny covers it. */
export const NEEDS_NO_PERMISSION = new Set(['sts:GetCallerIdentity']);

/** `('s3', 'GetBucketEncryption')` → `s3:GetEncryptionConfiguration`. */
export function iamAction(prefix: string, operation: string): string {
  const action = `${prefix}:${operation}`;
  return RENAMED[action] ?? action;
}

/** The IAM action an SDK command needs, from the client and command names its middleware context carries. */
export function iamActionOf(clientName: string, commandName: string): string {
  const prefix = IAM_PREFIX_BY_CLIENT[clientName] ?? clientName.replace(/Client$/, '').toLowerCase();
  return iamAction(prefix, commandName.replace(/Command$/, ''));
}
