import { REGION_NOT_ENABLED_CODES } from '../model';

/**
 * Turning what the AWS SDK returns into the inventory's vocabulary: Steampipe-style snake_case keys,
 * ISO timestamps, flat tag records.
 */

/** `DBInstanceIdentifier` → `db_instance_identifier`, `Ipv6CidrBlock` → `ipv6_cidr_block`, `MultiAZ` → `multi_az`. */
export function snakeKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * A deep copy of an SDK structure with snake_case keys, Dates as ISO strings and undefined members
 * dropped, so attributes are plain JSON. Policy documents must not go through here: their keys
 * (Effect, Action, ...) are part of the document.
 */
export function snake(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(snake);
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined || k === '$metadata') continue;
      out[snakeKey(k)] = snake(v);
    }
    return out;
  }
  return value;
}

/** `snake` over a list, never null: absent lists are empty lists. */
export function snakeList(value: readonly unknown[] | undefined | null): unknown[] {
  return (value ?? []).map(snake);
}

/** An SDK timestamp (a Date; epoch milliseconds in CloudWatch Logs) as an ISO string, or null. */
export function iso(value: Date | string | number | undefined | null): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (value instanceof Date) return value.toISOString();
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString();
}

interface TagLike {
  Key?: string | undefined;
  Value?: string | undefined;
}

/** AWS's `[{Key, Value}]` as a flat `{key: value}` record. */
export function tagRecord(tags: readonly TagLike[] | undefined | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of tags ?? []) if (t.Key !== undefined) out[t.Key] = t.Value ?? '';
  return out;
}

/** `?? null` for every optional SDK scalar, so attributes never hold undefined. */
export function orNull<T>(value: T | undefined | null): T | null {
  return value ?? null;
}

/** IAM returns policy documents URL-encoded; the document itself keeps AWS's keys. */
export function policyDocument(encoded: string | undefined | null): unknown {
  if (!encoded) return null;
  try {
    return JSON.parse(decodeURIComponent(encoded)) as unknown;
  } catch {
    try {
      return JSON.parse(encoded) as unknown;
    } catch {
      return encoded;
    }
  }
}

/** The error's AWS code (`name` on SDK v3 service exceptions). */
export function errorName(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { name?: unknown; Code?: unknown };
    if (typeof e.Code === 'string') return e.Code;
    if (typeof e.name === 'string') return e.name;
  }
  return '';
}

const DENIED = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'UnauthorizedOperation',
  'AuthorizationError',
]);

export function isAccessDenied(err: unknown): boolean {
  return DENIED.has(errorName(err));
}

/** A region the account has not opted in to (REGION_NOT_ENABLED_CODES). */
export function isRegionDisabled(err: unknown): boolean {
  return REGION_NOT_ENABLED_CODES.includes(errorName(err));
}

/** A call the identity may not make, or made in a region the account has not enabled: left out, not fatal. */
export function isRefused(err: unknown): boolean {
  return isAccessDenied(err) || isRegionDisabled(err);
}

/** Splits a list into chunks of `size` (APIs that take at most N ids per call). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs `fn` over `items` with at most `width` promises pending, keeping order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, items.length)) }, worker));
  return out;
}

/** Every item of every page a paginator yields. */
export async function allPages<P, T>(
  pages: AsyncIterable<P>,
  items: (page: P) => readonly T[] | undefined,
): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(...(items(page) ?? []));
  return out;
}
