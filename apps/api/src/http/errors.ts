import type { Context, Next } from 'koa';
import { ZodError } from 'zod';
import { AppError, PaymentRequired, ServiceUnavailable } from '@opsi/core';
import { BacklogFull, isRedisOutOfMemory } from '@opsi/jobs';
import { drainRequest } from './drain';

/** Names the failing fields of a zod error in one readable line. */
export function describeZodError(error: ZodError, where: string): string {
  const parts = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.length ? issue.path.join('.') : where;
    return `${path}: ${issue.message}`;
  });
  return `Invalid ${where}: ${parts.join('; ')}`;
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
  type?: string;
}

function statusOf(error: HttpLikeError): number | undefined {
  const status = error.status ?? error.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : undefined;
}

const CLIENT_ERROR_DETAILS: Record<string, string> = {
  'entity.too.large': 'Request body too large.',
  'entity.parse.failed': 'Malformed JSON in the request body.',
  'encoding.unsupported': 'Unsupported body encoding.',
  'charset.unsupported': 'Unsupported body charset.',
};

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// Postgres: connection exceptions (class 08), the server shutting down or starting (57P01..57P03),
// too many connections (53300).
const PG_OUTAGE_CODES = /^(08...|57P0[123]|53300)$/;
const PG_OUTAGE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;
// A Redis Cluster adds its own: not connected yet or lost (ioredis), a slot without a master (CLUSTERDOWN),
// a failover under way (TRYAGAIN, MASTERDOWN).
const REDIS_OUTAGE_MESSAGES =
  /^(Connection is closed|Stream isn't writeable|Reached the max retries per request|Command timed out|LOADING |Cluster isn't ready|Failed to refresh slots cache|None of startup nodes is available|CLUSTERDOWN|TRYAGAIN|MASTERDOWN)/;

/** Retry-After (seconds) of a 503 for a full tenant backlog or a Redis at maxmemory. */
export const QUEUE_FULL_RETRY_AFTER = 10;

const OUTAGE_NAMES = {
  database: 'The database is',
  redis: 'Redis is',
  'database or Redis': 'The database or Redis is',
} as const;

/**
 * Which dependency an error says is unreachable ('database', 'redis', or a socket error of either),
 * or undefined for any other error. Such errors answer 503: the request may succeed once it is back.
 */
export function dependencyOutage(raw: unknown): 'database' | 'redis' | 'database or Redis' | undefined {
  if (!(raw instanceof Error)) return undefined;
  const error = raw as Error & { code?: unknown; severity?: unknown };
  const code = typeof error.code === 'string' ? error.code : '';
  if (error.name === 'MaxRetriesPerRequestError' || REDIS_OUTAGE_MESSAGES.test(error.message)) return 'redis';
  if (PG_OUTAGE_MESSAGES.test(error.message)) return 'database';
  if (typeof error.severity === 'string' && PG_OUTAGE_CODES.test(code)) return 'database';
  if (SOCKET_CODES.has(code)) return 'database or Redis';
  return undefined;
}

/**
 * Answers 503 at once, rather than after the client's retries, when the request-path Redis connection
 * is known to be down (it lost the server and is reconnecting). A connection still making its first
 * attempt is given its chance.
 */
export function assertRedisUp(redis: { status: string }) {
  if (redis.status === 'reconnecting' || redis.status === 'close' || redis.status === 'end') {
    throw new ServiceUnavailable('Redis is unavailable; retry shortly.');
  }
}

/**
 * Mounted first: every error leaves as `{detail}` (or the contract's 402 shape). Client errors keep a
 * safe message; anything unexpected is a 500 with a fixed message and the request id, stack in the log.
 */
export async function errorMiddleware(ctx: Context, next: Next) {
  try {
    await next();
  } catch (raw) {
    const error = raw as Error & HttpLikeError;
    let status: number;
    let body: unknown;
    if (raw instanceof PaymentRequired) {
      status = 402;
      body = raw.body();
    } else if (raw instanceof AppError) {
      status = raw.status;
      body = { detail: raw.detail };
      ctx.set(raw.headers);
      if (status >= 500) (ctx.state.log ?? console).error({ err: raw, status }, raw.detail);
    } else if (raw instanceof ZodError) {
      status = 400;
      body = { detail: describeZodError(raw, 'request') };
    } else if (statusOf(error) && statusOf(error)! < 500) {
      // Errors from body parsing (co-body / raw-body) and the router carry a status and a safe type.
      status = statusOf(error)!;
      const limit = (error as { limit?: unknown }).limit;
      body = {
        detail:
          error.type === 'entity.too.large' && typeof limit === 'number'
            ? `Request body too large (limit ${limit} bytes).`
            : (CLIENT_ERROR_DETAILS[error.type ?? ''] ?? (error.expose ? error.message : 'Bad request.')),
      };
    } else if (raw instanceof BacklogFull || isRedisOutOfMemory(raw)) {
      // Backpressure, not a quota: the tenant's queue is at QUEUE_TENANT_BACKLOG_MAX, or Redis refuses
      // writes at maxmemory (noeviction). Nothing was enqueued; the same request may succeed later.
      status = 503;
      body = {
        detail:
          raw instanceof BacklogFull
            ? `Too much work of this tenant is waiting (${raw.backlog} jobs in the ${raw.queue} queue); retry shortly.`
            : 'The job queue is out of memory; retry shortly.',
      };
      ctx.set('Retry-After', String(QUEUE_FULL_RETRY_AFTER));
      (ctx.state.log ?? console).warn({ err: raw }, 'queue full');
    } else if (dependencyOutage(raw)) {
      status = 503;
      body = { detail: `${OUTAGE_NAMES[dependencyOutage(raw)!]} unavailable; retry shortly.` };
      ctx.set('Retry-After', '5');
      (ctx.state.log ?? console).warn({ err: raw }, 'dependency unavailable');
    } else {
      status = statusOf(error) ?? 500;
      body = { detail: `Internal error. Quote request id ${String(ctx.state.requestId)} when reporting it.` };
      (ctx.state.log ?? console).error({ err: raw }, 'request failed');
    }
    // A body refused before it was all read: read the rest away first, or closing the connection
    // with it unread resets it and the client never sees this answer (drain.ts).
    if (!ctx.headerSent && !ctx.req.complete) await drainRequest(ctx.req);
    ctx.status = status;
    ctx.body = body;
    if (status === 413 || status === 400 || !ctx.req.complete) ctx.set('Connection', 'close');
  }
}
