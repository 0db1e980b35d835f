import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import {
  Forbidden,
  SESSION_COOKIE,
  Unauthorized,
  authenticateToken,
  resolveSession,
  type Auth,
  type TokenRejection,
} from '@opsi/core';
import type { ApiDeps } from '../deps';
import type { RouteAuth } from './route';

const REJECTION_DETAIL: Record<TokenRejection, string> = {
  malformed: 'Invalid token.',
  unknown: 'Invalid token.',
  revoked: 'This token has been revoked.',
  expired: 'This token has expired.',
  user_deleted: 'The user of this token no longer exists.',
  tenant_deleted: 'The tenant of this token no longer exists.',
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Thrown by `page` routes without a session: the router answers a redirect to /login. */
export class LoginRedirect extends Error {}

/**
 * The token a request carries: `Authorization: Bearer <token>`, or HTTP Basic with the token as the
 * password (any user name), for senders that can carry a credential only in a URL
 * (`https://opsi:<token>@host/...`, e.g. Amazon SNS). Same rules for both.
 */
function bearerSecret(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const basic = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? decoded.slice(colon + 1) : '';
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  // A present but malformed header is never treated as absent: that would fall through.
  return match ? match[1]! : '';
}

async function tokenAuth(ctx: Context, deps: ApiDeps, secret: string, needWrite: boolean): Promise<Auth> {
  const result = await authenticateToken(deps.db, secret);
  if (!result.ok) throw new Unauthorized(REJECTION_DETAIL[result.reason]);
  const { scope } = result.auth.token;
  if (scope === 'read' && (needWrite || !SAFE_METHODS.has(ctx.method))) {
    throw new Forbidden('This request needs a read_write token; this token has scope read.');
  }
  return result.auth;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function sessionAuth(
  ctx: Context,
  deps: ApiDeps,
): Promise<Extract<Auth, { kind: 'session' }> | undefined> {
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  if (!cookie) return undefined;
  const auth = await resolveSession(deps.db, cookie);
  if (auth && !SAFE_METHODS.has(ctx.method)) {
    const csrf = ctx.get('x-csrf-token');
    if (!csrf || !sameSecret(csrf, auth.session.csrf_token)) {
      throw new Forbidden('Missing or wrong X-CSRF-Token header for a cookie-authenticated request.');
    }
  }
  return auth;
}

/**
 * A viewer reads only: the same rule as its tokens (a viewer mints read tokens only, and a read token
 * changes nothing), applied to its browser session on routes that change state.
 */
export function assertSessionMayWrite(ctx: Context, auth: Extract<Auth, { kind: 'session' }>): void {
  if (auth.user.role === 'viewer' && !SAFE_METHODS.has(ctx.method)) {
    throw new Forbidden('A viewer can read but not change anything.');
  }
}

/**
 * Resolves the caller for a route's declared access. Missing, malformed, unknown, expired or revoked
 * credentials are a 401 everywhere but `none` routes; never a fall-through to anonymous.
 */
export async function authenticate(
  ctx: Context,
  deps: ApiDeps,
  access: RouteAuth,
): Promise<Auth | undefined> {
  if (access === 'none') return undefined;
  const secret = bearerSecret(ctx);
  switch (access) {
    case 'read':
    case 'read_write':
      if (secret === undefined) throw new Unauthorized();
      return tokenAuth(ctx, deps, secret, access === 'read_write');
    case 'session': {
      if (secret !== undefined) {
        await tokenAuth(ctx, deps, secret, false).catch((e) => {
          if (e instanceof Forbidden) return; // a valid read token is still a token: 403 below
          throw e;
        });
        throw new Forbidden(
          'This endpoint takes a browser session, not a token: a token never mints a token.',
        );
      }
      const auth = await sessionAuth(ctx, deps);
      if (!auth) throw new Unauthorized('Sign in with a browser session first (POST /auth/login).');
      return auth;
    }
    case 'session_or_read_write': {
      if (secret !== undefined) return tokenAuth(ctx, deps, secret, true);
      const auth = await sessionAuth(ctx, deps);
      if (!auth) throw new Unauthorized();
      assertSessionMayWrite(ctx, auth);
      return auth;
    }
    case 'page': {
      const auth = await sessionAuth(ctx, deps);
      if (!auth) throw new LoginRedirect();
      return auth;
    }
  }
}

/**
 * A request may name a tenant (X-Tenant-ID header, or a tenant_id query or body field, by id or slug);
 * naming any tenant but the caller's own is a 403.
 */
export function assertOwnTenant(ctx: Context, auth: Auth, body: unknown): void {
  const named: unknown[] = [ctx.get('x-tenant-id') || undefined, ctx.query.tenant_id];
  if (body && typeof body === 'object' && 'tenant_id' in body)
    named.push((body as { tenant_id: unknown }).tenant_id);
  for (const value of named.flat()) {
    if (value === undefined || value === null) continue;
    if (value !== auth.tenant.id && value !== auth.tenant.slug) {
      throw new Forbidden(
        'This credential belongs to another tenant; it cannot act on the tenant named here.',
      );
    }
  }
}
