import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { BadRequest, Conflict, mintToken, secretBoxFor, type Auth } from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import { html, layout } from '../pages/html';

// The browser half of `opsi login`: the CLI listens on 127.0.0.1 at a random port and opens
// /cli/login?port=&state=&name=&code_challenge=&code_challenge_method=S256 here (PKCE, RFC 7636). The
// signed-in user approves the token's name and scope; the page then mints a read_write token, keeps it
// (sealed) in Redis under a one-time code for CODE_TTL_SECONDS, and sends the browser to the CLI's
// loopback address with the code and the state. The CLI exchanges the code with its verifier on a
// back-channel POST /cli/login/token: single use, bound to the challenge, so the token is never in a
// URL (history, sync, logs) and a code seen by anyone else is worthless. Each state mints once (a
// replay is 409), so a page reloaded or a link sent twice never mints a second token.

const HTML = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' };
const STATE_TTL_SECONDS = 15 * 60;
const CODE_TTL_SECONDS = 120;

export const CliLoginRequest = z.object({
  port: z.coerce.number().int().min(1024).max(65535),
  state: z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, 'state must be 16 to 128 URL-safe characters'),
  name: z.string().trim().min(1).max(100).default('opsi CLI'),
  code_challenge: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]{43}$/,
      'code_challenge must be the base64url SHA-256 of the verifier (43 characters)',
    ),
  code_challenge_method: z.literal('S256', 'code_challenge_method must be S256'),
});

const TokenExchangeBody = z.strictObject({
  code: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'code must be 43 URL-safe characters'),
  code_verifier: z
    .string()
    .regex(/^[A-Za-z0-9._~-]{43,128}$/, 'code_verifier must be 43 to 128 of [A-Za-z0-9._~-] (RFC 7636)'),
});

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const codeKey = (prefix: string, code: string) => `${prefix}:cli-code:${sha256(code).toString('hex')}`;

// Read and delete in one step, so two exchanges of one code cannot both get the token.
const TAKE_LUA = `local v = redis.call('GET', KEYS[1]) if v then redis.call('DEL', KEYS[1]) end return v`;

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
      <form
        id="cli-approve"
        data-port="${req.port}"
        data-state="${req.state}"
        data-challenge="${req.code_challenge}"
      >
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
          A one-time code goes to <code>http://127.0.0.1:${req.port}/callback</code>, the command line's own
          listener, which trades it for the token. Approve only if you just ran <code>opsi login</code>.
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
    const code = randomBytes(32).toString('base64url');
    const grant = {
      token: secretBoxFor(deps.config).seal(minted.token),
      token_id: minted.id,
      challenge: body.code_challenge,
    };
    await deps.redis.set(
      codeKey(deps.config.REDIS_PREFIX, code),
      JSON.stringify(grant),
      'EX',
      CODE_TTL_SECONDS,
    );
    return reply(
      201,
      { token_id: minted.id, redirect: callbackUrl(body.port, { state: body.state, code }) },
      { 'Cache-Control': 'no-store' },
    );
  },
});

export const postCliLoginToken = defineRoute({
  method: 'POST',
  path: '/cli/login/token',
  auth: 'none',
  internal: true,
  summary: "`opsi login`'s back channel: trades the one-time code and its PKCE verifier for the token",
  body: TokenExchangeBody,
  errors: [400, 415],
  handler: async ({ deps, body }) => {
    const raw = (await deps.redis.eval(TAKE_LUA, 1, codeKey(deps.config.REDIS_PREFIX, body.code))) as
      string | null;
    if (!raw) throw new BadRequest('This sign-in code is unknown, used or expired: run opsi login again.');
    const grant = JSON.parse(raw) as { token: string; token_id: string; challenge: string };
    const given = sha256(body.code_verifier);
    const expected = Buffer.from(grant.challenge, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new BadRequest('code_verifier does not match the code_challenge this sign-in started with.');
    return reply(
      200,
      { token: secretBoxFor(deps.config).open(grant.token), token_id: grant.token_id },
      { 'Cache-Control': 'no-store' },
    );
  },
});

export const cliLoginRoutes = [getCliLoginPage, postCliLogin, postCliLoginToken];
