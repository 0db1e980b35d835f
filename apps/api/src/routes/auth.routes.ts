import type { Context } from 'koa';
import { z } from 'zod';
import { LoginBody, SessionResponse } from '@opsi/contracts';
import { AppError, SESSION_COOKIE, login, logout, resolveSession } from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import { safeNext } from '../http/safe-next';
import { tenantView, userView } from './views';

function setSessionCookie(ctx: Context, value: string, expires: Date) {
  ctx.cookies.set(SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.secure,
    path: '/',
    expires,
    overwrite: true,
  });
}

export const postLogin = defineRoute({
  method: 'POST',
  path: '/auth/login',
  auth: 'none',
  summary: 'Sign in with email and password; sets the HttpOnly session cookie',
  description:
    'JSON answers {user, tenant, csrf_token}. An HTML form post (urlencoded) is redirected to the next page, or back to /login on failure. Wrong email or password: 401 (the same answer for both).',
  tags: ['browser session'],
  body: LoginBody.extend({ next: z.string().optional() }),
  bodyTypes: ['json', 'form'],
  responses: { 200: SessionResponse, 303: null },
  errors: [400, 401, 415],
  handler: async ({ ctx, deps, body }) => {
    const isForm = ctx.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
    let session;
    try {
      session = await login(deps.db, body.email, body.password, deps.config.SESSION_TTL_HOURS);
    } catch (e) {
      if (isForm && e instanceof AppError && e.status === 401) {
        return reply(303, undefined, {
          Location: `/login?error=1&next=${encodeURIComponent(safeNext(body.next, deps.config.publicUrl))}`,
        });
      }
      throw e;
    }
    setSessionCookie(ctx, session.secret, session.expiresAt);
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
    setSessionCookie(ctx, '', new Date(0));
    return reply(204);
  },
});

export const authRoutes = [postLogin, getSession, postLogout];
