import type { Context } from 'koa';
import type { z } from 'zod';
import type { Auth } from '@opsi/core';
import type { ApiDeps } from '../deps';

/**
 * Who may call a route, declared beside it:
 * - `none`: no authentication (an Authorization header is ignored);
 * - `read`: a bearer token of either scope (a read token still cannot use a non-GET method);
 * - `read_write`: a bearer token with scope read_write;
 * - `session`: a browser session only; a bearer token gets 403 (a token never mints a token);
 * - `session_or_read_write`: a browser session or a read_write token (the unversioned /api/pulse group);
 * - `page`: a browser session, else a redirect to /login (server-rendered pages).
 * Cookie-authenticated non-GET requests must carry X-CSRF-Token.
 */
export type RouteAuth = 'none' | 'read' | 'read_write' | 'session' | 'session_or_read_write' | 'page';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface HandlerArgs<P, Q, B, A> {
  ctx: Context;
  deps: ApiDeps;
  auth: A;
  params: P;
  query: Q;
  body: B;
}

/** A handler answers a body (200), or a Reply for another status, headers, HTML or a stream. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

export const reply = (status: number, body?: unknown, headers?: Record<string, string>) =>
  new Reply(status, body, headers);

type AuthFor<A extends RouteAuth> = A extends 'none'
  ? undefined
  : A extends 'page' | 'session'
    ? Extract<Auth, { kind: 'session' }>
    : Auth;

export interface RouteSpec<
  A extends RouteAuth = RouteAuth,
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  path: string;
  auth: A;
  summary: string;
  description?: string;
  tags?: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** The largest body this route reads, when it is not BODY_LIMIT_BYTES (plans are larger than most bodies). */
  bodyLimit?: (config: ApiDeps['config']) => number;
  /**
   * Body strings may hold NUL characters, which other routes refuse because Postgres cannot store
   * them: for a body that is read and never stored (a plan to review, where UTF-16 read as bytes puts
   * a NUL after each character).
   */
  bodyMayHoldNul?: boolean;
  /**
   * Body encodings accepted; JSON unless a route also takes an HTML form post, or Amazon SNS's JSON sent
   * as `text/plain` with an `x-amz-sns-message-type` header (`sns`).
   */
  bodyTypes?: Array<'json' | 'form' | 'sns'>;
  /** Success responses by status, for validation in development and for the OpenAPI document. */
  responses?: Record<number, z.ZodType | null | { html: true } | { sse: true }>;
  /** Errors this route can answer besides the ones every route can (401, 403, 404, 5xx). */
  errors?: number[];
  /** Kept out of the OpenAPI document (operational and page routes). */
  internal?: boolean;
  handler: (args: HandlerArgs<z.infer<P>, z.infer<Q>, z.infer<B>, AuthFor<A>>) => unknown;
}

/** Declares an endpoint: method, path, scope, schemas and handler in one place. */
export function defineRoute<
  A extends RouteAuth,
  P extends z.ZodType = z.ZodType<Record<string, string>>,
  Q extends z.ZodType = z.ZodType<Record<string, unknown>>,
  B extends z.ZodType = z.ZodType<undefined>,
>(spec: RouteSpec<A, P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}
