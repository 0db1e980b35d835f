import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The API's Prometheus registry: request counts and latency by route template and status. */
export function createHttpMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'opsi_api_' });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status (SSE: until the stream closes)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
    registers: [registry],
  });
  return { registry, requests, duration };
}

export type HttpMetrics = ReturnType<typeof createHttpMetrics>;
