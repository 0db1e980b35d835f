import Koa from 'koa';
import type { ApiDeps } from './deps';
import { errorMiddleware } from './http/errors';
import { securityHeaders } from './http/security-headers';
import { createHttpMetrics, type HttpMetrics } from './http/metrics';
import { requestContext } from './http/request-context';
import { buildRouter } from './http/router';
import type { RouteSpec } from './http/route';
import { buildOpenApi } from './openapi';
import { mountQueueDashboard } from './http/queue-dashboard';
import { routes } from './routes/index';
import { opsRoutes } from './routes/ops.routes';
import { defineRoute } from './http/route';
import { NotFound, setGraphCacheSize, setPasswordHashLimits, type Auth } from '@opsi/core';
import { authenticate, LoginRedirect } from './http/authenticate';
import { isConsoleAddress } from './console/paths';
import { consoleNotFound } from './routes/console.routes';

/** Every route the app serves, operational and OpenAPI included. */
export function allRoutes(metrics: HttpMetrics = createHttpMetrics()): RouteSpec[] {
  const list: RouteSpec[] = [...routes, ...opsRoutes(metrics)];
  list.push(
    defineRoute({
      method: 'GET',
      path: '/api/v1/openapi.json',
      auth: 'none',
      summary: 'This OpenAPI document',
      tags: ['service'],
      handler: ({ deps }) => buildOpenApi(list, deps.revision),
    }),
  );
  return list;
}

/** The Koa application: request context, errors as {detail}, routes, and {detail} 404/405 for the rest. */
export async function createApp(deps: ApiDeps) {
  const app = new Koa({ proxy: deps.config.TRUST_PROXY });
  setGraphCacheSize(deps.config.GRAPH_CACHE_TENANTS);
  setPasswordHashLimits(deps.config.PASSWORD_HASH_CONCURRENCY, deps.config.PASSWORD_HASH_WAIT_MS);
  app.silent = true; // errors are logged once, by the error middleware, with the request id
  const metrics = createHttpMetrics();
  const router = buildRouter(allRoutes(metrics), deps);
  app.use(requestContext(deps.logger, metrics));
  app.use(errorMiddleware);
  const headers = securityHeaders(deps.config.publicUrl);
  app.use(async (ctx, next) => {
    ctx.set(headers);
    await next();
  });
  await mountQueueDashboard(app, deps);
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body != null) return;
    // What the router answered without a body: unknown path (404), or a known path with another method
    // (405, with the router's Allow header kept) or an unknown method (501).
    // A browser asking for an address the console could have (outside the API's, the assets' and the
    // other services' prefixes) gets the console's own "not found" page, signed in first like any page.
    if (
      ctx.status === 404 &&
      (ctx.method === 'GET' || ctx.method === 'HEAD') &&
      isConsoleAddress(ctx.path) &&
      ctx.accepts('json', 'html') === 'html'
    ) {
      let auth;
      try {
        auth = (await authenticate(ctx, deps, 'page')) as Extract<Auth, { kind: 'session' }>;
      } catch (e) {
        if (!(e instanceof LoginRedirect)) throw e;
        ctx.redirect(`/login?next=${encodeURIComponent(ctx.originalUrl)}`);
        return;
      }
      const page = await consoleNotFound(deps, auth);
      ctx.status = page.status;
      ctx.set(page.headers);
      ctx.body = page.body;
      return;
    }
    if (ctx.status === 404) throw new NotFound(`No route for ${ctx.method} ${ctx.path}.`);
    if (ctx.status === 405) ctx.body = { detail: `Method ${ctx.method} is not allowed on ${ctx.path}.` };
    if (ctx.status === 501) ctx.body = { detail: `Method ${ctx.method} is not implemented.` };
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
