import type { ResourceType } from '../model';
import type { AwsClientCtor, SdkClient } from './aws-clients';
import type { InventoryBuilder } from './inventory-builder';
import { errorName, isAccessDenied } from './shape';

/** What a service collector gets for one region (or for a global service, its home region). */
export interface CollectContext {
  region: string;
  /** Every region of the sync (S3 keeps the buckets located in one of them). */
  regions: readonly string[];
  out: InventoryBuilder;
  client<C extends SdkClient>(Ctor: AwsClientCtor<C>, region?: string): C;
  /** The options every `send` and paginator gets, so an aborted sync stops at the next request. */
  send: { abortSignal: AbortSignal };
  /** How many per-item detail calls (per bucket, per user...) to keep pending at once. */
  width: number;
  /**
   * Runs one listing of a collector that stands on its own (DescribeVolumes, DescribeVpcs...): refused
   * for permissions (AccessDenied, UnauthorizedOperation) or in a region not enabled, it resolves
   * undefined and `types` are kept as they were in this region, while the collector's other listings
   * go on. One refused call thus leaves out only what it reads, not its whole service. `region` names
   * where those types live when it is not the client's region (IAM's are 'global', buckets' '*').
   */
  part<T>(types: ResourceType[], run: () => Promise<T>, region?: string): Promise<T | undefined>;
  /** Records `types` (in `region`, the client's by default) as not read: the sync keeps what it held. */
  unread(types: ResourceType[], region?: string): void;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; code: string; denied: boolean };

/**
 * A per-item detail call that may be denied on its own (one user's access keys, one load balancer's
 * attributes): refused, it resolves null and its operation is added to `unreadable`, so the item is
 * kept with that detail unknown (null), never read as "none". Other errors fail as before.
 */
export async function readOrNull<T>(op: string, unreadable: string[], call: Promise<T>): Promise<T | null> {
  const res = await tolerate(call, []);
  if (res.ok) return res.value;
  unreadable.push(op);
  return null;
}

/**
 * A per-item detail call whose "not there" errors (NoSuchBucketPolicy, NoSuchEntity...) or an
 * AccessDenied on that one item mean "absent" rather than a failed sync.
 */
export async function tolerate<T>(call: Promise<T>, absentCodes: readonly string[]): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call };
  } catch (err) {
    const code = errorName(err);
    if (isAccessDenied(err)) return { ok: false, code, denied: true };
    if (absentCodes.includes(code)) return { ok: false, code, denied: false };
    throw err;
  }
}
