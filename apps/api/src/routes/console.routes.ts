// The web console: its page at `/`, its bundled assets, and the thin browser-session routes it calls.
//
// The console is a client of the same endpoints as every other client. Under /api/v1 a browser session
// alone is not accepted (decisions.md: those take a bearer token), so each /api/v1 endpoint the console
// uses is also declared under /console/api/… with `session` access: the same handler, schemas and
// tenant scoping, with the session cookie and, for every change, the X-CSRF-Token header. A viewer's
// session reads but changes nothing (403), as its tokens would. The /api/pulse group already accepts a
// session, so the console calls it as it is.
import { z } from 'zod';
import { Prompt } from '@opsi/contracts';
import { NotFound, startRun, type Auth } from '@opsi/core';
import { assertRedisUp } from '../http/errors';
import { assertSessionMayWrite } from '../http/authenticate';
import { defineRoute, reply, type RouteSpec } from '../http/route';
import { consoleAssets, entryFiles } from '../console/bundle';
import { html, layout } from '../pages/html';
import { CONSOLE_ROUTE_PATHS } from '../console/paths';
import type { ApiDeps } from '../deps';

type SessionAuth = Extract<Auth, { kind: 'session' }>;

/** The /api/v1 endpoints the console calls, as `METHOD path`. */
export const CONSOLE_MIRRORED = [
  'GET /api/v1/pulse/overview',
  'GET /api/v1/pulse/findings',
  'PATCH /api/v1/pulse/findings/:id/status',
  'GET /api/v1/pulse/resolved',
  'GET /api/v1/pulse/recommendations',
  'GET /api/v1/sessions',
  'POST /api/v1/sessions',
  'GET /api/v1/history',
  'GET /api/v1/stream/attach',
  'GET /api/v1/incidents',
  'POST /api/v1/incidents',
  'GET /api/v1/incidents/:id',
  'PATCH /api/v1/incidents/:id',
  'GET /api/v1/incidents/:id/timeline',
  'POST /api/v1/incidents/:id/timeline',
  'GET /api/v1/incidents/:id/timeline/stream',
  'POST /api/v1/incidents/:id/agent-investigate',
  'POST /api/v1/incidents/:id/war-room',
  'GET /api/v1/graph/summary',
  'GET /api/v1/graph/search',
  'GET /api/v1/graph/blast-radius/:id',
  'GET /api/v1/graph/risks',
  'GET /api/v1/reports/morning',
  'POST /api/v1/reports/morning',
  'GET /api/v1/team',
  'GET /api/v1/audit',
  'GET /api/v1/audit/verify',
  'GET /api/v1/marketplace/tenant/tools',
];

/** `/api/v1/x` → `/console/api/x`. */
export const consolePath = (path: string) => path.replace(/^\/api\/v1\//, '/console/api/');

/** The session twins of the mirrored /api/v1 routes. */
export function mirrorForConsole(apiRoutes: RouteSpec[]): RouteSpec[] {
  return CONSOLE_MIRRORED.map((key) => {
    const route = apiRoutes.find((r) => `${r.method} ${r.path}` === key);
    if (!route) throw new Error(`console mirror: no route ${key}`);
    return {
      ...route,
      path: consolePath(route.path),
      auth: 'session',
      internal: true,
      summary: `${route.summary} (the console: browser session + X-CSRF-Token)`,
      handler: (args) => {
        assertSessionMayWrite(args.ctx, args.auth as never);
        return route.handler(args as never);
      },
    } satisfies RouteSpec;
  });
}

/**
 * Starts an agent turn for the console and answers at once; the page then follows it with
 * GET /console/api/stream/attach (an EventSource, which resumes with Last-Event-ID by itself). A POST,
 * not the GET /api/v1/stream a token client uses: starting a run spends budget, so it carries the CSRF
 * header like every other change.
 */
export const postConsoleRun = defineRoute({
  method: 'POST',
  path: '/console/api/runs',
  auth: 'session',
  internal: true,
  summary: 'Start an agent turn from the console; answers 202 {run_id, session_id}',
  body: z.object({
    prompt: Prompt,
    session_id: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,128}$/)
      .optional(),
  }),
  errors: [400, 404, 429, 503],
  handler: async ({ ctx, deps, auth, body }) => {
    assertSessionMayWrite(ctx, auth);
    assertRedisUp(deps.redis);
    const { runId, sessionId } = await startRun(
      { db: deps.db, redis: deps.redis, redisPrefix: deps.config.REDIS_PREFIX, ...deps.runs },
      auth,
      { prompt: body.prompt, sessionId: body.session_id },
    );
    return reply(202, { run_id: runId, session_id: sessionId });
  },
});

/** The console's page: an empty frame its script fills; who is signed in is in data attributes. */
export async function consolePageBody(deps: ApiDeps, auth: SessionAuth): Promise<string> {
  const { js, css } = entryFiles(await consoleAssets(deps.config.NODE_ENV === 'production'));
  return layout({
    title: 'Console',
    user: { email: auth.user.email, tenant: auth.tenant.name },
    csrf: auth.session.csrf_token,
    scripts: ['/assets/pages.js'], // the header's Sign out
    modules: [`/assets/console/${js}`],
    styles: [`/assets/console/${css}`],
    body: html`<div
      id="console"
      data-role="${auth.user.role}"
      data-email="${auth.user.email}"
      data-tenant="${auth.tenant.slug}"
      data-tier="${auth.tenant.tier}"
    >
      <noscript><p class="error">The console needs JavaScript.</p></noscript>
      <p class="empty" id="booting">Loading the console…</p>
    </div>`,
    wide: true,
  });
}

const PAGE_HEADERS = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' };

/**
 * The console's pages, one route per address of its table (../console/paths.ts), each answering the
 * same frame: the browser code renders the page the path names, so a link can be shared and a reload
 * keeps the page. Unknown addresses get the frame with 404 (app.ts), and the console's "not found".
 */
export const consolePages = CONSOLE_ROUTE_PATHS.map((path) =>
  defineRoute({
    method: 'GET',
    path,
    auth: 'page',
    internal: true,
    summary: path === '/' ? 'The web console' : `The web console at ${path}`,
    responses: { 200: { html: true } },
    handler: async ({ deps, auth }) => reply(200, await consolePageBody(deps, auth), PAGE_HEADERS),
  }),
);

/** The console's frame for an address it does not know: 404, its "not found" page. */
export async function consoleNotFound(deps: ApiDeps, auth: SessionAuth) {
  return { status: 404, body: await consolePageBody(deps, auth), headers: PAGE_HEADERS };
}

export const getConsoleAsset = defineRoute({
  method: 'GET',
  path: '/assets/console/:file',
  auth: 'none',
  internal: true,
  summary: 'A file of the console bundle (content-hashed name)',
  params: z.object({ file: z.string().regex(/^[A-Za-z0-9_-]+\.(js|css)$/) }),
  handler: async ({ deps, params }) => {
    const file = (await consoleAssets(deps.config.NODE_ENV === 'production')).get(params.file);
    if (!file) throw new NotFound('No such console file.');
    return reply(200, file.body, {
      'Content-Type': file.type,
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
  },
});

export const consoleRoutes = [...consolePages, getConsoleAsset, postConsoleRun];
