import type { EC2ClientConfig } from '@aws-sdk/client-ec2';
import pLimit, { type LimitFunction } from 'p-limit';
import type { CollectWarning } from '../model';
import { iamActionOf } from './iam-actions';
import { errorName, isRefused } from './shape';

export type AwsCredentials = NonNullable<EC2ClientConfig['credentials']>;

/** What every client of one sync is built with. */
export interface AwsClientConfig {
  region: string;
  credentials: AwsCredentials;
  /** Attempts per request, the first included; throttling and transient errors are retried by the SDK. */
  maxAttempts: number;
  /** Both modes retry throttling (RequestLimitExceeded, ThrottlingException...) and transient errors. */
  retryMode: 'adaptive' | 'standard';
}

type Next = (args: unknown) => Promise<unknown>;

/** The part of an SDK v3 client this module touches beyond `send`. */
export interface SdkClient {
  middlewareStack: object;
  destroy(): void;
}

/**
 * Each client's stack is typed by its own service's inputs and outputs; the limiter does not look at
 * either, so it is added through this service-agnostic view.
 */
interface AnyStack {
  add(
    middleware: (next: Next, context: { clientName?: string; commandName?: string }) => Next,
    options: { step: 'initialize'; name: string; override: boolean },
  ): void;
}

export type AwsClientCtor<C extends SdkClient> = new (config: AwsClientConfig) => C;

/** Builds a client; tests pass one that adds a fake transport to the client's middleware stack. */
export type AwsClientFactory = <C extends SdkClient>(Ctor: AwsClientCtor<C>, config: AwsClientConfig) => C;

export const defaultClientFactory: AwsClientFactory = (Ctor, config) => new Ctor(config);

/**
 * One client per service and region for a sync, all sharing one request limiter. The limiter sits in
 * the middleware stack (initialize step, outside the retry loop) rather than around our calls, so it
 * also bounds the requests that SDK paginators send, and a request backing off after throttling keeps
 * its slot instead of letting another one hit the throttled API.
 */
export class ClientPool {
  private readonly clients = new Map<AwsClientCtor<SdkClient>, Map<string, SdkClient>>();
  private readonly limit: LimitFunction;
  private readonly refused = new Map<string, CollectWarning>();
  /** Requests sent again by the SDK's retry strategy (throttling, 5xx), from each answer's `$metadata.attempts`. */
  retries = 0;
  /** Calls answered (after any retries), of every service: a sync that read nothing fails. */
  answered = 0;

  constructor(
    private readonly base: Omit<AwsClientConfig, 'region'>,
    concurrency: number,
    private readonly signal: AbortSignal,
    private readonly factory: AwsClientFactory = defaultClientFactory,
  ) {
    this.limit = pLimit(Math.max(1, concurrency));
  }

  get<C extends SdkClient>(Ctor: AwsClientCtor<C>, region: string): C {
    let byRegion = this.clients.get(Ctor);
    if (!byRegion) this.clients.set(Ctor, (byRegion = new Map()));
    const existing = byRegion.get(region);
    if (existing) return existing as C;
    const client = this.factory(Ctor, { ...this.base, region });
    (client.middlewareStack as AnyStack).add(
      (next, context) => async (args) => {
        try {
          const answer = await this.limit(() => {
            this.signal.throwIfAborted();
            return next(args);
          });
          this.countRetries((answer as { output?: { $metadata?: { attempts?: number } } }).output?.$metadata);
          this.answered++;
          return answer;
        } catch (err) {
          this.countRetries((err as { $metadata?: { attempts?: number } }).$metadata);
          if (isRefused(err))
            this.refuse(err, iamActionOf(context.clientName ?? '', context.commandName ?? ''), region);
          throw err;
        }
      },
      { step: 'initialize', name: 'opsiRequestLimiter', override: true },
    );
    byRegion.set(region, client);
    return client;
  }

  /** Every call refused for permissions or an unopened region, once per action and region. */
  warnings(): CollectWarning[] {
    return [...this.refused.values()].sort(
      (a, b) => a.action.localeCompare(b.action) || a.region.localeCompare(b.region),
    );
  }

  private countRetries(metadata: { attempts?: number } | undefined) {
    if (metadata?.attempts && metadata.attempts > 1) this.retries += metadata.attempts - 1;
  }

  private refuse(err: unknown, action: string, clientRegion: string) {
    const service = action.split(':')[0] as string;
    // IAM is global, and the bucket list is the account's, whichever region's endpoint answered.
    const region = service === 'iam' || action === 's3:ListAllMyBuckets' ? 'global' : clientRegion;
    const key = `${action}|${region}`;
    if (this.refused.has(key)) return;
    const message = err instanceof Error ? err.message : String(err);
    this.refused.set(key, { service, action, region, code: errorName(err), message: message.slice(0, 500) });
  }

  destroy(): void {
    for (const byRegion of this.clients.values()) for (const c of byRegion.values()) c.destroy();
    this.clients.clear();
  }
}
