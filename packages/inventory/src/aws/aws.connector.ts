import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { fromIni, fromNodeProviderChain } from '@aws-sdk/credential-providers';
import {
  AWS_IAM_POLICY,
  type CollectedInventory,
  type Connector,
  type ResourceType,
  type UnreadScope,
} from '../model';
import { collectAutoScaling } from './autoscaling.collect';
import { ClientPool, defaultClientFactory, type AwsClientFactory, type AwsCredentials } from './aws-clients';
import type { CollectContext } from './collect-context';
import { collectDynamoDb } from './dynamodb.collect';
import { collectEc2 } from './ec2.collect';
import { collectElastiCache } from './elasticache.collect';
import { collectElb } from './elb.collect';
import {
  collectIamAccount,
  collectIamInstanceProfiles,
  collectIamPolicies,
  collectIamRoles,
  collectIamUsers,
  type IamAccountFacts,
} from './iam.collect';
import { InventoryBuilder } from './inventory-builder';
import { linkAcrossServices } from './link';
import { collectAlarms, collectCloudTrail, collectLogGroups } from './monitoring.collect';
import { collectRds } from './rds.collect';
import { collectS3 } from './s3.collect';
import { errorName, isRefused, snake } from './shape';
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
  /** What the task adds, kept as it was when the task may not read (region '*' for S3's buckets). */
  types: ResourceType[];
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
        // What the scan read, beyond who it is: "may read nothing" means no call but STS was answered.
        const answeredBefore = pool.answered;
        const unreadParts: UnreadScope[] = [];
        const ctx = (region: string): CollectContext => ({
          region,
          regions,
          out,
          client: (Ctor, r = region) => pool.get(Ctor, r),
          send: { abortSignal },
          width: concurrency,
          part: async (types, run, scope = region) => {
            try {
              return await run();
            } catch (err) {
              if (failed.signal.aborted || !isRefused(err)) throw err;
              unreadParts.push({ region: scope, types });
              return undefined;
            }
          },
          unread: (types, scope = region) => void unreadParts.push({ region: scope, types }),
        });

        let iam: IamAccountFacts = { alias: null, summary: {} };
        const ebsDefault: Record<string, boolean | null> = {};
        const global = (service: string, types: ResourceType[], run: () => Promise<unknown>): Task => ({
          service,
          region: 'global',
          types,
          run: async () => void (await run()),
        });
        const tasks: Task[] = [
          global('iam', [], async () => void (iam = await collectIamAccount(ctx(home)))),
          global('iam', ['aws_iam_user', 'aws_iam_access_key'], () => collectIamUsers(ctx(home))),
          global('iam', ['aws_iam_role'], () => collectIamRoles(ctx(home))),
          global('iam', ['aws_iam_policy'], () => collectIamPolicies(ctx(home))),
          global('iam', ['aws_iam_instance_profile'], () => collectIamInstanceProfiles(ctx(home))),
          // Buckets carry their own region: a bucket list that may not be read keeps them all.
          { service: 's3', region: '*', types: ['aws_s3_bucket'], run: () => collectS3(ctx(home)) },
        ];
        for (const region of regions) {
          const c = ctx(region);
          const task = (service: string, types: ResourceType[], run: () => Promise<unknown>): Task => ({
            service,
            region,
            types,
            run: async () => void (await run()),
          });
          tasks.push(
            task(
              'ec2',
              ['aws_ec2_instance', 'aws_ebs_volume', 'aws_ebs_snapshot', 'aws_ec2_launch_template'],
              async () => void (ebsDefault[region] = (await collectEc2(c)).ebsEncryptionByDefault),
            ),
            task(
              'vpc',
              [
                'aws_vpc',
                'aws_vpc_subnet',
                'aws_vpc_route_table',
                'aws_vpc_internet_gateway',
                'aws_vpc_nat_gateway',
                'aws_vpc_security_group',
                'aws_vpc_eip',
              ],
              () => collectVpc(c),
            ),
            task('elbv2', ['aws_ec2_application_load_balancer', 'aws_ec2_target_group'], () => collectElb(c)),
            task('autoscaling', ['aws_ec2_autoscaling_group'], () => collectAutoScaling(c)),
            task('rds', ['aws_rds_db_instance', 'aws_rds_db_snapshot'], () => collectRds(c)),
            task('dynamodb', ['aws_dynamodb_table'], () => collectDynamoDb(c)),
            task('elasticache', ['aws_elasticache_replication_group'], () => collectElastiCache(c)),
            task('cloudtrail', ['aws_cloudtrail_trail'], () => collectCloudTrail(c)),
            task('cloudwatch', ['aws_cloudwatch_alarm'], () => collectAlarms(c)),
            task('logs', ['aws_cloudwatch_log_group'], () => collectLogGroups(c)),
          );
        }
        const unread = byRegion([...(await runAll(tasks, failed, abortSignal, onProgress)), ...unreadParts]);
        const warnings = pool.warnings();
        if (pool.answered === answeredBefore) {
          const denied = [...new Set(warnings.map((w) => w.action))];
          throw new AwsCollectError(
            'all',
            home,
            warnings[0]?.code ?? 'AccessDenied',
            `the identity ${identity.Arn ?? ''} may read nothing of this account: give it the read-only actions of ${AWS_IAM_POLICY} (refused: ${denied.join(', ')})`,
          );
        }

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
            // What this scan could not read, so detectors do not read an absence into it.
            unread,
          },
        });
        const { resources, edges } = out.finish();
        return {
          observedAt,
          resources,
          edges,
          metrics: [],
          costs: [],
          events: [],
          warnings,
          unread,
          retries: pool.retries,
        };
      } finally {
        // A request still backing off (a task failed or was refused while a sibling call was throttled)
        // must not retry after the sync ended, into the next sync's account or another tenant's.
        if (!failed.signal.aborted) failed.abort(new Error('AWS sync ended'));
        pool.destroy();
      }
    },
  };
}

/** One scope per region, the types of every refused task and part of it together. */
function byRegion(scopes: UnreadScope[]): UnreadScope[] {
  const types = new Map<string, Set<ResourceType>>();
  for (const s of scopes) {
    // A refused call that adds no resource (GetEbsEncryptionByDefault...) leaves its warning only.
    if (s.types.length === 0) continue;
    const set = types.get(s.region) ?? new Set<ResourceType>();
    for (const t of s.types) set.add(t);
    types.set(s.region, set);
  }
  return [...types]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([region, set]) => ({ region, types: [...set].sort() }));
}

/**
 * Starts every task at once (the client pool bounds the requests). A task refused for permissions
 * (AccessDenied, UnauthorizedOperation...) or in a region the account has not enabled is left out and
 * its scope returned, so the sync keeps what it held there instead of reading the gap as deletions.
 * Any other failure aborts the others and fails the sync, rather than returning an inventory with a
 * service missing, which would read as every resource of that service having been deleted.
 */
async function runAll(
  tasks: Task[],
  failed: AbortController,
  signal: AbortSignal,
  onProgress: ((phase: string, done: number, total: number | null) => void) | undefined,
): Promise<UnreadScope[]> {
  let done = 0;
  let first: unknown;
  const unread: UnreadScope[] = [];
  await Promise.allSettled(
    tasks.map(async (t) => {
      try {
        await t.run();
      } catch (err) {
        if (!failed.signal.aborted && isRefused(err)) {
          unread.push({ region: t.region, types: t.types });
        } else if (first === undefined && !failed.signal.aborted) {
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
  return unread;
}
