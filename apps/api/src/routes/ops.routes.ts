import { timingSafeEqual } from 'node:crypto';
import { Registry } from 'prom-client';
import { sql } from '@opsi/db';
import { pingRedis } from '@opsi/redis';
import { Unauthorized } from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import type { HttpMetrics } from '../http/metrics';

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref(),
    ),
  ]);
}

/** Liveness, readiness and Prometheus metrics; no authentication unless METRICS_TOKEN is set. */
export function opsRoutes(metrics: HttpMetrics) {
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      internal: true,
      summary: 'The process is up',
      handler: () => ({ status: 'ok' }),
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      auth: 'none',
      internal: true,
      summary: 'The database and Redis answer (on a Redis Cluster: its state is ok and every master answers)',
      handler: async ({ deps }) => {
        const [database, redis] = await Promise.allSettled([
          withTimeout(sql`select 1`.execute(deps.db), 2000),
          withTimeout(pingRedis(deps.redis), 2000),
        ]);
        const checks = {
          database: database.status === 'fulfilled' ? 'ok' : String((database.reason as Error).message),
          redis: redis.status === 'fulfilled' ? 'ok' : String((redis.reason as Error).message),
        };
        const ready = checks.database === 'ok' && checks.redis === 'ok';
        if (ready) return { status: 'ready', checks };
        const down = Object.entries(checks)
          .filter(([, v]) => v !== 'ok')
          .map(([k]) => k);
        return reply(503, { detail: `Not ready: ${down.join(' and ')} unreachable.`, checks });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/metrics',
      auth: 'none',
      internal: true,
      summary: 'Prometheus metrics',
      handler: async ({ ctx, deps }) => {
        const expected = deps.config.METRICS_TOKEN;
        if (expected) {
          const given = Buffer.from(ctx.get('authorization').replace(/^Bearer\s+/i, ''));
          const want = Buffer.from(expected);
          if (given.length !== want.length || !timingSafeEqual(given, want)) throw new Unauthorized();
        }
        const registry = deps.extraMetrics?.length
          ? Registry.merge([metrics.registry, ...deps.extraMetrics])
          : metrics.registry;
        return reply(200, await registry.metrics(), { 'Content-Type': registry.contentType });
      },
    }),
  ];
}
