import type { Context } from 'koa';
import { z } from 'zod';
import { LoginBody, SessionResponse } from '@opsi/contracts';
import { AppError, Forbidden, SESSION_COOKIE, SignInLimits, login, logout, resolveSession } from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import { safeNext } from '../http/safe-next';
import { isHttpsPublicUrl } from '../http/security-headers';
import { tenantView, userView } from './views';

/**
 * The session cookie: Secure when the request came over HTTPS, and whenever PUBLIC_URL is https (a
 * TLS-terminating proxy without TRUST_PROXY shows the service plain HTTP, but browsers speak HTTPS).
 */
function setSessionCookie(ctx: Context, publicUrl: string, value: string, expires: Date) {
  const secure = ctx.secure || isHttpsPublicUrl(publicUrl);
  // The cookies module refuses a Secure cookie on a connection it thinks is plain unless told.
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    expires,
    overwrite: true,
  });
}

/**
 * Login CSRF: a page on another site must not sign the visitor's browser into an account of its
 * choosing. Browsers say where a request comes from: Sec-Fetch-Site (every current browser) decides,
 * and a cross-site or same-site one is 403. A browser too old to send it is judged by Origin, which
 * must be this service's (our pages send no Referer, so such a browser's own form posts say `null`
 * and are refused too: the cost of not letting a sandboxed cross-site frame through). Clients that
 * send neither header (the CLI, scripts) are not browsers and are let through.
 */
function refuseCrossSite(ctx: Context, publicUrl: string) {
  const site = ctx.get('sec-fetch-site');
  if (site) {
    if (site === 'same-origin' || site === 'none') return;
    throw new Forbidden(`Sign-in must come from this site's own page (Sec-Fetch-Site: ${site}).`);
  }
  const origin = ctx.get('origin');
  if (origin && origin !== new URL(publicUrl).origin && origin !== `${ctx.protocol}://${ctx.host}`)
    throw new Forbidden("Sign-in must come from this site's own page (Origin is another site).");
}

export const postLogin = defineRoute({
  method: 'POST',
  path: '/auth/login',
  auth: 'none',
  summary: 'Sign in with email and password; sets the HttpOnly session cookie',
  description:
    'JSON answers {user, tenant, csrf_token}. An HTML form post (urlencoded) is redirected to the next page, or back to /login on failure. Wrong email or password: 401 (the same answer for both). Too many failures for the account or the client address (LOGIN_MAX_FAILURES_*): 429 with Retry-After. A cross-site browser request (Sec-Fetch-Site or Origin of another site): 403. Too many password checks at once: 503 with Retry-After.',
  tags: ['browser session'],
  body: LoginBody.extend({ next: z.string().optional() }),
  bodyTypes: ['json', 'form'],
  responses: { 200: SessionResponse, 303: null },
  errors: [400, 401, 403, 415, 429, 503],
  handler: async ({ ctx, deps, body }) => {
    refuseCrossSite(ctx, deps.config.publicUrl);
    const isForm = ctx.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
    const limits = new SignInLimits(deps.redis, deps.config.REDIS_PREFIX, deps.config);
    // Counted as in flight from here, so guesses sent together are held to the limit as well.
    await limits.attempt(body.email, ctx.ip);
    let session;
    try {
      session = await login(deps.db, body.email, body.password, deps.config.SESSION_TTL_HOURS);
    } catch (e) {
      if (!(e instanceof AppError && e.status === 401)) {
        await limits.abandoned(body.email, ctx.ip);
        throw e;
      }
      await limits.failed(body.email, ctx.ip);
      if (isForm)
        return reply(303, undefined, {
          Location: `/login?error=1&next=${encodeURIComponent(safeNext(body.next, deps.config.publicUrl))}`,
        });
      throw e;
    }
    await limits.succeeded(body.email, ctx.ip);
    setSessionCookie(ctx, deps.config.publicUrl, session.secret, session.expiresAt);
    if (isForm) return reply(303, undefined, { Location: safeNext(body.next, deps.config.publicUrl) });
    const auth = (await resolveSession(deps.db, session.secret))!;
    return { user: userView(auth), tenant: tenantView(auth), csrf_token: auth.session.csrf_token };
  },
});

export const getSession = defineRoute({
  method: 'GET',
  path: '/auth/session',
  auth: 'session',
  summary: 'The live browser session, or 401',
  tags: ['browser session'],
  responses: { 200: SessionResponse },
  handler: ({ auth }) => ({
    user: userView(auth),
    tenant: tenantView(auth),
    csrf_token: auth.session.csrf_token,
  }),
});

export const postLogout = defineRoute({
  method: 'POST',
  path: '/auth/logout',
  auth: 'session',
  summary: 'Ends the browser session (needs X-CSRF-Token)',
  tags: ['browser session'],
  responses: { 204: null },
  handler: async ({ ctx, deps, auth }) => {
    await logout(deps.db, auth.session.id);
    setSessionCookie(ctx, deps.config.publicUrl, '', new Date(0));
    return reply(204);
  },
});

export const authRoutes = [postLogin, getSession, postLogout];
