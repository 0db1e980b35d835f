import {
  GetBucketAclCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLocationCommand,
  GetBucketLoggingCommand,
  GetBucketPolicyCommand,
  GetBucketPolicyStatusCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  paginateListBuckets,
  S3Client,
  type Bucket,
} from '@aws-sdk/client-s3';
import { tolerate, type CollectContext, type Outcome } from './collect-context';
import { iso, mapBounded, snake, snakeList, tagRecord } from './shape';

/**
 * Buckets located in one of the sync's regions, each with its public-access, policy, ACL, encryption,
 * versioning, lifecycle, logging and tags. A per-bucket setting that is not configured (NoSuch...)
 * or not readable (AccessDenied) is recorded as absent; `unreadable` names the calls that were denied.
 */
export async function collectS3(ctx: CollectContext): Promise<void> {
  const home = ctx.client(S3Client);
  const buckets: Bucket[] = [];
  for await (const page of paginateListBuckets({ client: home, pageSize: 1000 }, {}, ctx.send))
    buckets.push(...(page.Buckets ?? []));
  await mapBounded(buckets, ctx.width, async (b) => {
    if (!b.Name) return;
    const region = b.BucketRegion ?? (await locate(ctx, home, b.Name));
    if (region && ctx.regions.includes(region)) await addBucket(ctx, b, region);
  });
}

/**
 * Older ListBuckets answers carry no BucketRegion; an empty LocationConstraint is us-east-1, "EU"
 * eu-west-1. A bucket whose location may not be read cannot be placed in a region: it is left out,
 * and the buckets the sync held are kept (a bucket is not gone because its location was denied).
 */
async function locate(ctx: CollectContext, client: S3Client, bucket: string): Promise<string | null> {
  const res = await tolerate(client.send(new GetBucketLocationCommand({ Bucket: bucket }), ctx.send), [
    'NoSuchBucket',
  ]);
  if (!res.ok && res.denied) ctx.unread(['aws_s3_bucket'], '*');
  if (!res.ok) return null;
  const c = res.value.LocationConstraint as string | undefined;
  return !c ? 'us-east-1' : c === 'EU' ? 'eu-west-1' : c;
}

async function addBucket(ctx: CollectContext, b: Bucket, region: string) {
  const { out } = ctx;
  const name = b.Name as string;
  const client = ctx.client(S3Client, region);
  const get = <T>(call: Promise<T>, ...absent: string[]) => tolerate(call, ['NoSuchBucket', ...absent]);
  const Bucket = name;
  const [pab, policyStatus, policy, acl, encryption, versioning, lifecycle, logging, tagging] =
    await Promise.all([
      get(
        client.send(new GetPublicAccessBlockCommand({ Bucket }), ctx.send),
        'NoSuchPublicAccessBlockConfiguration',
      ),
      get(client.send(new GetBucketPolicyStatusCommand({ Bucket }), ctx.send), 'NoSuchBucketPolicy'),
      get(client.send(new GetBucketPolicyCommand({ Bucket }), ctx.send), 'NoSuchBucketPolicy'),
      get(client.send(new GetBucketAclCommand({ Bucket }), ctx.send)),
      get(
        client.send(new GetBucketEncryptionCommand({ Bucket }), ctx.send),
        'ServerSideEncryptionConfigurationNotFoundError',
      ),
      get(client.send(new GetBucketVersioningCommand({ Bucket }), ctx.send)),
      get(
        client.send(new GetBucketLifecycleConfigurationCommand({ Bucket }), ctx.send),
        'NoSuchLifecycleConfiguration',
      ),
      get(client.send(new GetBucketLoggingCommand({ Bucket }), ctx.send)),
      get(client.send(new GetBucketTaggingCommand({ Bucket }), ctx.send), 'NoSuchTagSet'),
    ]);
  const outcomes: Array<[string, Outcome<unknown>]> = [
    ['GetPublicAccessBlock', pab],
    ['GetBucketPolicyStatus', policyStatus],
    ['GetBucketPolicy', policy],
    ['GetBucketAcl', acl],
    ['GetBucketEncryption', encryption],
    ['GetBucketVersioning', versioning],
    ['GetBucketLifecycleConfiguration', lifecycle],
    ['GetBucketLogging', logging],
    ['GetBucketTagging', tagging],
  ];
  // Deleted between the listing and these calls.
  if (outcomes.some(([, o]) => !o.ok && o.code === 'NoSuchBucket')) return;
  const unreadable = outcomes.filter(([, o]) => !o.ok && o.denied).map(([op]) => op);
  // No configuration means nothing is blocked; a denied read leaves the flags unknown.
  const block = pab.ok ? (pab.value.PublicAccessBlockConfiguration ?? {}) : pab.denied ? null : {};
  const flag = (v: boolean | undefined) => (block === null ? null : v === true);
  const tags = tagging.ok ? tagRecord(tagging.value.TagSet) : {};
  out.add({
    type: 'aws_s3_bucket',
    arn: out.s3Arn(name),
    nativeId: name,
    region,
    name: tags.Name ?? name,
    tags,
    attributes: {
      name,
      region,
      creation_date: iso(b.CreationDate),
      block_public_acls: flag(block?.BlockPublicAcls),
      block_public_policy: flag(block?.BlockPublicPolicy),
      ignore_public_acls: flag(block?.IgnorePublicAcls),
      restrict_public_buckets: flag(block?.RestrictPublicBuckets),
      bucket_policy_is_public: policyStatus.ok
        ? policyStatus.value.PolicyStatus?.IsPublic === true
        : policyStatus.denied
          ? null
          : false,
      // The policy document keeps AWS's keys (Effect, Principal, Action...).
      policy: policy.ok && policy.value.Policy ? parseJson(policy.value.Policy) : null,
      acl: acl.ok ? { owner: snake(acl.value.Owner), grants: snakeList(acl.value.Grants) } : null,
      server_side_encryption_configuration: encryption.ok
        ? snake(encryption.value.ServerSideEncryptionConfiguration)
        : null,
      versioning_enabled: versioning.ok ? versioning.value.Status === 'Enabled' : null,
      versioning_mfa_delete: versioning.ok ? versioning.value.MFADelete === 'Enabled' : null,
      lifecycle_rules: lifecycle.ok ? snakeList(lifecycle.value.Rules) : null,
      logging: logging.ok ? snake(logging.value.LoggingEnabled) : null,
      unreadable,
    },
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
