import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { OpsiApiError } from '@opsi/sdk';
import { configPath, removeLogin, storeLogin, storedLogin } from '../config';
import type { Context } from '../context';
import { CliError, EXIT } from '../exit-codes';

const TOKEN = /^opsi_[A-Za-z0-9_-]{43}$/;
const CODE = /^[A-Za-z0-9_-]{43}$/;
const LOGIN_TIMEOUT_MS = 10 * 60_000;

function page(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · opsi</title><link rel="icon" href="data:,"></head><body style="font:16px system-ui,sans-serif;max-width:36em;margin:72px auto;color:#1d2330"><h1 style="font-size:22px">${title}</h1><p>${text}</p></body></html>`;
}

function sameState(given: string | null, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** PKCE (RFC 7636): a random verifier kept here, and its S256 challenge sent when the login starts. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Trades the one-time code from the browser's redirect for the token, on a back-channel POST that
 * proves, with the verifier, that this is the process that started the login.
 */
export async function exchangeCode(baseUrl: string, code: string, verifier: string): Promise<string> {
  const res = await fetch(`${baseUrl}/cli/login/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code, code_verifier: verifier }),
  });
  const body = (await res.json().catch(() => ({}))) as { token?: string; detail?: string };
  if (!res.ok || !body.token || !TOKEN.test(body.token))
    throw new CliError(`sign-in failed: ${body.detail ?? `HTTP ${res.status}`}`, EXIT.auth);
  return body.token;
}

/**
 * Listens on 127.0.0.1 at a random port for the one redirect that carries the state it made. A wrong
 * state is answered 400 and the wait goes on; once a code arrived, the state is spent and any repeat is
 * refused. Resolves with the one-time code (never a token: that comes over the back channel), rejects
 * when the user cancels in the browser or time runs out.
 */
export async function waitForBrowser(state: string, timeoutMs = LOGIN_TIMEOUT_MS) {
  let settle!: { resolve: (code: string) => void; reject: (e: Error) => void };
  const result = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  let spent = false;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = (status: number, title: string, text: string) => {
      res.writeHead(status, {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        'Referrer-Policy': 'no-referrer',
        Connection: 'close',
      });
      res.end(page(title, text));
    };
    if (req.method !== 'GET' || url.pathname !== '/callback')
      return answer(404, 'Not found', 'This is the opsi command line waiting for its sign-in.');
    const givenState = url.searchParams.get('state');
    if (spent || !sameState(givenState, state))
      return answer(
        400,
        'Sign-in refused',
        'This sign-in does not belong to the waiting <code>opsi login</code> (wrong or already used state). Run <code>opsi login</code> again.',
      );
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code') ?? '';
    if (error) {
      spent = true;
      answer(200, 'Sign-in cancelled', 'No token was created. You can close this tab.');
      return settle.reject(new CliError('sign-in was cancelled in the browser', EXIT.auth));
    }
    if (!CODE.test(code)) return answer(400, 'Sign-in refused', 'The redirect carried no valid code.');
    spent = true;
    answer(200, 'Signed in', 'The opsi command line is fetching its token. You can close this tab.');
    settle.resolve(code);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const timer = setTimeout(
    () => settle.reject(new CliError('gave up waiting for the browser sign-in (10 minutes)', EXIT.auth)),
    timeoutMs,
  );
  const close = () => {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  };
  return { port, code: result.finally(close), close };
}

export interface LoginOptions {
  browser?: boolean;
  name?: string;
}

export async function login(ctx: Context, opts: LoginOptions) {
  let token: string;
  const explicit = ctx.options.token ?? ctx.env.OPSI_TOKEN;
  if (explicit) {
    token = explicit;
  } else {
    const state = randomBytes(24).toString('base64url');
    const pkce = pkcePair();
    const name = opts.name ?? `opsi CLI on ${hostname()}`;
    const wait = await waitForBrowser(state);
    const url = `${ctx.url}/cli/login?${new URLSearchParams({
      port: String(wait.port),
      state,
      name,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    })}`;
    const interrupted = () => {
      wait.close();
      process.exit(EXIT.interrupted);
    };
    process.once('SIGINT', interrupted);
    if (opts.browser === false) {
      process.stderr.write(
        `Open this address in a browser to sign in:\n\n  ${url}\n\nWaiting for the browser…\n`,
      );
    } else {
      process.stderr.write(`Opening ${url}\nin your browser to sign in. Waiting for the browser…\n`);
      try {
        const { default: open } = await import('open');
        const child = await open(url);
        child.on('error', () => process.stderr.write(`Could not open a browser: open the address above.\n`));
      } catch {
        process.stderr.write(`Could not open a browser: open the address above.\n`);
      }
    }
    try {
      token = await exchangeCode(ctx.url, await wait.code, pkce.verifier);
    } finally {
      process.off('SIGINT', interrupted);
    }
  }
  const me = await ctx.anonymousClient(token).me();
  const path = await storeLogin(
    ctx.url,
    {
      token,
      token_id: me.token.id,
      user: me.user.email,
      tenant: me.tenant.slug,
      created_at: new Date().toISOString(),
    },
    ctx.env,
  );
  const result = {
    url: ctx.url,
    user: me.user,
    tenant: me.tenant,
    token: { id: me.token.id, scope: me.token.scope, expires_at: me.token.expires_at },
    config_path: path,
  };
  if (ctx.json) return ctx.printJson(result);
  ctx.out(
    `${ctx.c.green('✓')} Logged in to ${ctx.url} as ${ctx.c.bold(me.user.email)} (tenant ${me.tenant.slug}, scope ${me.token.scope}).`,
  );
  ctx.note(`Token stored in ${path}`);
}

export async function logout(ctx: Context) {
  const explicit = ctx.options.token ?? ctx.env.OPSI_TOKEN;
  const stored = await storedLogin(ctx.url, ctx.env);
  const token = explicit ?? stored?.token;
  if (!token) throw new CliError(`not logged in to ${ctx.url}`, EXIT.auth);
  const client = ctx.anonymousClient(token);
  let revoked = false;
  let note = '';
  try {
    const me = await client.me();
    await client.revokeToken(me.token.id);
    revoked = true;
  } catch (e) {
    // A token already revoked or expired is logged out all the same.
    if (!(e instanceof OpsiApiError && e.status === 401)) throw e;
    note = 'the token was already revoked or expired';
  }
  const removed = explicit ? false : await removeLogin(ctx.url, ctx.env);
  if (ctx.json)
    return ctx.printJson({ url: ctx.url, revoked, removed_from: removed ? configPath(ctx.env) : null });
  ctx.out(`${ctx.c.green('✓')} Logged out of ${ctx.url}${revoked ? ': the token is revoked' : `: ${note}`}.`);
}

export async function whoami(ctx: Context) {
  const me = await (await ctx.client()).me();
  if (ctx.json) return ctx.printJson({ url: ctx.url, ...me });
  ctx.out(`${ctx.c.bold(me.user.email)} (${me.user.role}) in tenant ${me.tenant.slug} (${me.tenant.tier})`);
  ctx.out(`${ctx.c.dim('token')} ${me.token.id} · scope ${me.token.scope} · ${ctx.url}`);
}
