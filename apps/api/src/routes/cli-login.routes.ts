import { createHash } from 'node:crypto';
import { z } from 'zod';
import { Conflict, mintToken, type Auth } from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import { html, layout } from '../pages/html';

// The browser half of `opsi login`: the CLI listens on 127.0.0.1 at a random port and opens
// /cli/login?port=&state=&name= here. The signed-in user approves the token's name and scope; the page
// then mints a read_write token and sends the browser to the CLI's loopback address with the token and
// the state, which the CLI checks. Each state mints once (a replay is 409), so a page reloaded or a link
// sent twice never mints a second token.

const HTML = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' };
const STATE_TTL_SECONDS = 15 * 60;

export const CliLoginRequest = z.object({
  port: z.coerce.number().int().min(1024).max(65535),
  state: z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, 'state must be 16 to 128 URL-safe characters'),
  name: z.string().trim().min(1).max(100).default('opsi CLI'),
});

const ApproveBody = CliLoginRequest.extend({
  expires_in_days: z.int().min(1).max(365).nullable().optional(),
});

/** The loopback address the browser is sent to; only 127.0.0.1, never a host the request names. */
export function callbackUrl(port: number, params: Record<string, string>): string {
  return `http://127.0.0.1:${port}/callback?${new URLSearchParams(params)}`;
}

function approvePage(auth: Extract<Auth, { kind: 'session' }>, req: z.infer<typeof CliLoginRequest>): string {
  const isViewer = auth.user.role === 'viewer';
  return layout({
    title: 'Authorize the opsi CLI',
    user: { email: auth.user.email, tenant: auth.tenant.name },
    csrf: auth.session.csrf_token,
    scripts: ['/assets/pages.js'],
    body: html`<section class="card login cli-login">
      <h1>Authorize the opsi command line</h1>
      <p class="lead">
        A command line on this computer asks for a token to call the API as
        <strong>${auth.user.email}</strong> in tenant <strong>${auth.tenant.slug}</strong>.
      </p>
      <form id="cli-approve" data-port="${req.port}" data-state="${req.state}">
        <label>Token name <input name="name" required maxlength="100" value="${req.name}" /></label>
        <p class="scope">Scope <code>read_write</code>: read everything, make changes and ask the agent.</p>
        <label
          >Expires
          <select name="expires_in_days">
            <option value="">never</option>
            <option value="30">in 30 days</option>
            <option value="90" selected>in 90 days</option>
            <option value="365">in 365 days</option>
          </select></label
        >
        <p class="note">
          The token goes to <code>http://127.0.0.1:${req.port}/callback</code>, the command line's own
          listener. Approve only if you just ran <code>opsi login</code>.
        </p>
        ${
          isViewer
            ? html`<p class="error" role="alert">
                A viewer can mint read tokens only: ask an admin for a role that can use the CLI.
              </p>`
            : html`<div class="row">
                  <button type="submit" id="approve">Approve</button>
                  <button type="button" id="deny" class="secondary">Cancel</button>
                </div>
                <p id="cli-error" class="error" role="alert"></p>`
        }
      </form>
    </section>`,
  });
}

export const getCliLoginPage = defineRoute({
  method: 'GET',
  path: '/cli/login',
  auth: 'page',
  internal: true,
  summary: 'The page where a signed-in user approves a token for `opsi login`',
  query: CliLoginRequest,
  responses: { 200: { html: true } },
  handler: ({ auth, query }) => reply(200, approvePage(auth, query), HTML),
});

export const postCliLogin = defineRoute({
  method: 'POST',
  path: '/cli/login',
  auth: 'session',
  internal: true,
  summary: 'Mint the approved read_write token for `opsi login` (session + X-CSRF-Token), once per state',
  body: ApproveBody,
  errors: [400, 409, 415],
  handler: async ({ deps, auth, body }) => {
    const key = `${deps.config.REDIS_PREFIX}:cli-login:${createHash('sha256').update(body.state).digest('hex')}`;
    const fresh = await deps.redis.set(key, auth.user.id, 'EX', STATE_TTL_SECONDS, 'NX');
    if (fresh !== 'OK') throw new Conflict('This sign-in request was already used: run opsi login again.');
    const minted = await mintToken(deps.db, auth, {
      name: body.name,
      scope: 'read_write',
      expiresInDays: body.expires_in_days ?? undefined,
    });
    return reply(
      201,
      {
        token_id: minted.id,
        redirect: callbackUrl(body.port, { state: body.state, token: minted.token }),
      },
      { 'Cache-Control': 'no-store' },
    );
  },
});

export const cliLoginRoutes = [getCliLoginPage, postCliLogin];
