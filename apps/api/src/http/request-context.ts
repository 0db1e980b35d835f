import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '@opsi/logger';
import type { HttpMetrics } from './metrics';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Outermost middleware: a request id on every response (the caller's, when it is safe to echo), a child
 * logger, one log line and one metrics sample per request, labelled by route template, never raw path.
 */
export function requestContext(logger: Logger, metrics: HttpMetrics) {
  return async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ request_id: requestId });
    ctx.set('x-request-id', requestId);
    const finish = () => {
      const route = (ctx.state.routePath as string | undefined) ?? 'unmatched';
      const labels = { method: ctx.method, route, status: String(ctx.status) };
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requests.inc(labels);
      metrics.duration.observe(labels, seconds);
      const level = route === '/healthz' || route === '/metrics' || route === '/readyz' ? 'debug' : 'info';
      (ctx.state.log as Logger)[level](
        { method: ctx.method, route, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1000) },
        'request',
      );
    };
    try {
      await next();
    } finally {
      // Streaming handlers (SSE) return only once their response has closed, so this measures it all.
      finish();
    }
  };
}
