import { z } from 'zod';
import { SESSION_COOKIE, listTokens, resolveSession, revokeToken, type Auth } from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import { APP_CSS, PAGES_JS } from '../pages/assets';
import { html, layout, type Html } from '../pages/html';
import { safeNext } from '../http/safe-next';

const HTML = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' };
const page = { html: true } as const;

function when(date: Date | null): string {
  return date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—';
}

type TokenRow = Awaited<ReturnType<typeof listTokens>>[number];

function statusOf(t: TokenRow): 'active' | 'revoked' | 'expired' {
  if (t.revoked_at) return 'revoked';
  if (t.expires_at && t.expires_at.getTime() <= Date.now()) return 'expired';
  return 'active';
}

/** The token table: rendered into the page, and again after every mint or revoke. */
function tokensTable(tokens: TokenRow[]): Html {
  if (tokens.length === 0) return html`<p class="empty">No tokens yet. Create one above.</p>`;
  return html`<table>
    <thead>
      <tr>
        <th>Name</th>
        <th>Scope</th>
        <th>Token</th>
        <th>Created</th>
        <th>Expires</th>
        <th>Last used</th>
        <th>Status</th>
        <th></th>
      </tr>
    </thead>
    <tbody>
      ${tokens.map((t) => {
        const status = statusOf(t);
        return html`<tr data-token-id="${t.id}">
          <td>${t.name}</td>
          <td><code>${t.scope}</code></td>
          <td><code>${t.token_hint}…</code></td>
          <td>${when(t.created_at)}</td>
          <td>${t.expires_at ? when(t.expires_at) : 'never'}</td>
          <td>${when(t.last_used_at)}</td>
          <td><span class="pill ${status}">${status}</span></td>
          <td>
            ${status === 'active' ? html`<button type="button" class="danger" data-revoke="${t.id}" data-name="${t.name}">Revoke</button>` : ''}
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function tokensPage(auth: Extract<Auth, { kind: 'session' }>, tokens: TokenRow[]): string {
  const canWrite = auth.user.role !== 'viewer';
  return layout({
    title: 'API tokens',
    user: { email: auth.user.email, tenant: auth.tenant.name },
    csrf: auth.session.csrf_token,
    scripts: ['/assets/pages.js'],
    body: html`<h1>API tokens</h1>
      <p class="lead">
        Tokens let the CLI, CI and scripts call the API as you, in tenant
        <strong>${auth.tenant.slug}</strong>. Only a hash is stored: a token's secret is shown once, when you
        create it.
      </p>
      <noscript><p class="error">This page needs JavaScript to create and revoke tokens.</p></noscript>
      <section class="card">
        <h2>Create a token</h2>
        <form id="mint" class="inline">
          <label>Name <input name="name" required maxlength="100" placeholder="e.g. ci-pipeline" /></label>
          <label
            >Scope
            <select name="scope">
              <option value="read">read: GET endpoints only</option>
              ${canWrite ? html`<option value="read_write">read_write: also changes and the agent</option>` : ''}
            </select></label
          >
          <label
            >Expires
            <select name="expires_in_days">
              <option value="">never</option>
              <option value="7">in 7 days</option>
              <option value="30" selected>in 30 days</option>
              <option value="90">in 90 days</option>
              <option value="365">in 365 days</option>
            </select></label
          >
          <button type="submit">Create token</button>
        </form>
        <p id="mint-error" class="error" role="alert"></p>
      </section>
      <section id="secret-panel" class="card secret" hidden>
        <h2>Copy your new token now: you will not see it again</h2>
        <div class="row">
          <code id="secret"></code><button type="button" id="copy" class="secondary">Copy</button
          ><button type="button" id="dismiss" class="secondary">Done</button>
        </div>
        <p id="copied" class="ok-note"></p>
      </section>
      <section class="card">
        <h2>Your tokens</h2>
        <div id="tokens">${tokensTable(tokens)}</div>
      </section>`,
  });
}

function loginPage(next: string, failed: boolean): string {
  return layout({
    title: 'Sign in',
    body: html`<section class="card login">
      <h1>Sign in</h1>
      <p class="lead">Operations Intelligence Service</p>
      <form method="post" action="/auth/login">
        <input type="hidden" name="next" value="${next}" />
        <label>Email <input type="email" name="email" autocomplete="username" required autofocus /></label>
        <label
          >Password <input type="password" name="password" autocomplete="current-password" required
        /></label>
        <button type="submit">Sign in</button>
        <p class="error" role="alert">${failed ? 'Wrong email or password.' : ''}</p>
      </form>
    </section>`,
  });
}

export const getLoginPage = defineRoute({
  method: 'GET',
  path: '/login',
  auth: 'none',
  internal: true,
  summary: 'Sign-in page',
  query: z.object({ next: z.string().optional(), error: z.string().optional() }),
  responses: { 200: page },
  handler: async ({ ctx, deps, query }) => {
    const next = safeNext(query.next, deps.config.publicUrl);
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    if (cookie && (await resolveSession(deps.db, cookie))) return reply(302, undefined, { Location: next });
    return reply(200, loginPage(next, query.error !== undefined), HTML);
  },
});

export const getTokensPage = defineRoute({
  method: 'GET',
  path: '/settings/tokens',
  auth: 'page',
  internal: true,
  summary: 'Token settings page',
  responses: { 200: page },
  handler: async ({ deps, auth }) => reply(200, tokensPage(auth, await listTokens(deps.db, auth)), HTML),
});

export const getTokensTable = defineRoute({
  method: 'GET',
  path: '/settings/tokens/table',
  auth: 'page',
  internal: true,
  summary: 'Token table fragment for the settings page',
  responses: { 200: page },
  handler: async ({ deps, auth }) => reply(200, tokensTable(await listTokens(deps.db, auth)).value, HTML),
});

export const postRevokeFromPage = defineRoute({
  method: 'POST',
  path: '/settings/tokens/:id/revoke',
  auth: 'session',
  internal: true,
  summary: 'Revoke a token from the settings page (session + X-CSRF-Token)',
  params: z.object({ id: z.uuid() }),
  handler: async ({ deps, auth, params }) => {
    await revokeToken(deps.db, auth, params.id);
    return reply(204);
  },
});

const asset = (path: string, type: string, body: string) =>
  defineRoute({
    method: 'GET',
    path,
    auth: 'none',
    internal: true,
    summary: `Static asset ${path}`,
    handler: () => reply(200, body, { 'Content-Type': type, 'Cache-Control': 'public, max-age=300' }),
  });

export const pageRoutes = [
  getLoginPage,
  getTokensPage,
  getTokensTable,
  postRevokeFromPage,
  asset('/assets/app.css', 'text/css; charset=utf-8', APP_CSS),
  asset('/assets/pages.js', 'text/javascript; charset=utf-8', PAGES_JS),
];
