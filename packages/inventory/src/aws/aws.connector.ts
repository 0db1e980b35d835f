import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { fromIni, fromNodeProviderChain } from '@aws-sdk/credential-providers';
import type { CollectedInventory, Connector } from '../model';
import { collectAutoScaling } from './autoscaling.collect';
import { ClientPool, defaultClientFactory, type AwsClientFactory, type AwsCredentials } from './aws-clients';
import type { CollectContext } from './collect-context';
import { collectDynamoDb } from './dynamodb.collect';
import { collectEc2 } from './ec2.collect';
import { collectElastiCache } from './elasticache.collect';
import { collectElb } from './elb.collect';
import { collectIam, type IamAccountFacts } from './iam.collect';
import { InventoryBuilder } from './inventory-builder';
import { linkAcrossServices } from './link';
import { collectAlarms, collectCloudTrail, collectLogGroups } from './monitoring.collect';
import { collectRds } from './rds.collect';
import { collectS3 } from './s3.collect';
import { errorName, snake } from './shape';
import { collectVpc } from './vpc.collect';

export interface AwsConnectorOptions {
  /** A profile of ~/.aws/config and ~/.aws/credentials; without one, the SDK's default credential chain. */
  profile?: string;
  /** Regions to read; IAM and the S3 bucket list are read once, through the first. */
  regions: string[];
  /** The account the connection belongs to: a sync whose credentials reach another account fails. */
  accountId?: string;
  /** Most AWS requests in flight at once, across all services and regions (default 8). */
  concurrency?: number;
  /** Attempts per request, the first included (default 10); throttling is retried with backoff. */
  maxAttempts?: number;
  /**
   * 'standard' (default): exponential backoff with jitter, 1 s base for throttling errors. 'adaptive'
   * also rate-limits each client after a throttle, which with few requests made so far can slow a
   * sync to a crawl; the concurrency bound already keeps the load down.
   */
  retryMode?: 'adaptive' | 'standard';
  /** Credentials to use instead of the profile or the default chain. */
  credentials?: AwsCredentials;
  clientFactory?: AwsClientFactory;
}

/** A failed read, naming the service and region it happened in. */
export class AwsCollectError extends Error {
  constructor(
    readonly service: string,
    readonly region: string,
    readonly code: string,
    cause: unknown,
  ) {
    super(
      `AWS ${service} in ${region}: ${code ? `${code}: ` : ''}${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'AwsCollectError';
  }
}

interface Task {
  service: string;
  region: string;
  run(): Promise<void>;
}

/**
 * A read-only connector for one AWS account: it sends only Describe/List/Get requests (and STS
 * GetCallerIdentity). It reads configuration only: CloudWatch metric data, the Cost and Usage Report
 * and CloudTrail events are not read yet, so `metrics`, `costs` and `events` come back empty.
 */
export function createAwsConnector(options: AwsConnectorOptions): Connector {
  const regions = [...new Set(options.regions)];
  if (regions.length === 0) throw new Error('createAwsConnector: at least one region is required');
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const home = regions[0] as string;

  return {
    kind: 'aws',
    async collect({ signal, onProgress }): Promise<CollectedInventory> {
      const observedAt = new Date();
      const failed = new AbortController();
      const abortSignal = signal ? AbortSignal.any([signal, failed.signal]) : failed.signal;
      const credentials =
        options.credentials ??
        (options.profile ? fromIni({ profile: options.profile }) : fromNodeProviderChain());
      const pool = new ClientPool(
        {
          credentials,
          maxAttempts: Math.max(1, options.maxAttempts ?? 10),
          retryMode: options.retryMode ?? 'standard',
        },
        concurrency,
        abortSignal,
        options.clientFactory ?? defaultClientFactory,
      );
      try {
        const identity = await pool
          .get(STSClient, home)
          .send(new GetCallerIdentityCommand({}), { abortSignal })
          .catch((err: unknown) => {
            throw new AwsCollectError('sts', home, errorName(err), err);
          });
        const accountId = identity.Account ?? '';
        if (!accountId || (options.accountId && options.accountId !== accountId)) {
          throw new Error(
            `AWS credentials reach account ${accountId || 'unknown'}, not ${options.accountId ?? 'a known account'}`,
          );
        }
        const out = new InventoryBuilder(accountId, identity.Arn?.split(':')[1] || 'aws');
        const ctx = (region: string): CollectContext => ({
          region,
          regions,
          out,
          client: (Ctor, r = region) => pool.get(Ctor, r),
          send: { abortSignal },
          width: concurrency,
        });

        let iam: IamAccountFacts = { alias: null, summary: {} };
        const ebsDefault: Record<string, boolean | null> = {};
        const tasks: Task[] = [
          { service: 'iam', region: 'global', run: async () => void (iam = await collectIam(ctx(home))) },
          { service: 's3', region: 'global', run: () => collectS3(ctx(home)) },
        ];
        for (const region of regions) {
          const c = ctx(region);
          tasks.push(
            {
              service: 'ec2',
              region,
              run: async () => void (ebsDefault[region] = (await collectEc2(c)).ebsEncryptionByDefault),
            },
            { service: 'vpc', region, run: () => collectVpc(c) },
            { service: 'elbv2', region, run: () => collectElb(c) },
            { service: 'autoscaling', region, run: () => collectAutoScaling(c) },
            { service: 'rds', region, run: () => collectRds(c) },
            { service: 'dynamodb', region, run: () => collectDynamoDb(c) },
            { service: 'elasticache', region, run: () => collectElastiCache(c) },
            { service: 'cloudtrail', region, run: () => collectCloudTrail(c) },
            { service: 'cloudwatch', region, run: () => collectAlarms(c) },
            { service: 'logs', region, run: () => collectLogGroups(c) },
          );
        }
        await runAll(tasks, failed, abortSignal, onProgress);

        linkAcrossServices(out);
        out.add({
          type: 'aws_account',
          arn: out.accountArn(),
          nativeId: accountId,
          region: 'global',
          name: iam.alias ?? accountId,
          attributes: {
            account_id: accountId,
            account_aliases: iam.alias ? [iam.alias] : [],
            partition: out.partition,
            // Organization membership would take the Organizations API, which this connector does not use.
            organization_id: null,
            account_mfa_enabled:
              iam.summary.AccountMFAEnabled === undefined ? null : iam.summary.AccountMFAEnabled === 1,
            account_access_keys_present:
              iam.summary.AccountAccessKeysPresent === undefined
                ? null
                : iam.summary.AccountAccessKeysPresent > 0,
            account_signing_certificates_present:
              iam.summary.AccountSigningCertificatesPresent === undefined
                ? null
                : iam.summary.AccountSigningCertificatesPresent > 0,
            iam_summary: snake(iam.summary),
            ebs_encryption_by_default: ebsDefault,
            caller_arn: identity.Arn ?? null,
          },
        });
        const { resources, edges } = out.finish();
        return { observedAt, resources, edges, metrics: [], costs: [], events: [] };
      } finally {
        pool.destroy();
      }
    },
  };
}

/**
 * Starts every task at once (the client pool bounds the requests); the first failure aborts the
 * others, and the sync fails rather than returning an inventory with a service missing, which
 * would read as every resource of that service having been deleted.
 */
async function runAll(
  tasks: Task[],
  failed: AbortController,
  signal: AbortSignal,
  onProgress: ((phase: string, done: number, total: number | null) => void) | undefined,
): Promise<void> {
  let done = 0;
  let first: unknown;
  await Promise.allSettled(
    tasks.map(async (t) => {
      try {
        await t.run();
      } catch (err) {
        if (first === undefined && !failed.signal.aborted) {
          first =
            err instanceof AwsCollectError
              ? err
              : new AwsCollectError(t.service, t.region, errorName(err), err);
          failed.abort(first);
        }
        return;
      }
      onProgress?.(`${t.service}:${t.region}`, ++done, tasks.length);
    }),
  );
  signal.throwIfAborted();
  if (first !== undefined) throw first;
}
