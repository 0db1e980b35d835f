import type { EC2ClientConfig } from '@aws-sdk/client-ec2';
import pLimit, { type LimitFunction } from 'p-limit';

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
    middleware: (next: Next) => Next,
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
      (next) => (args) =>
        this.limit(() => {
          this.signal.throwIfAborted();
          return next(args);
        }),
      { step: 'initialize', name: 'opsiRequestLimiter', override: true },
    );
    byRegion.set(region, client);
    return client;
  }

  destroy(): void {
    for (const byRegion of this.clients.values()) for (const c of byRegion.values()) c.destroy();
    this.clients.clear();
  }
}
