// The raw baseline of (2), and a rung between it and the API. Started as its own process by main.ts,
// which checks that every side answers the same findings. BENCH_BARE_MODE picks:
//   bare  Koa alone with one route that reads the tenant's findings with the same SQL text listFindings
//         sends for the route's defaults (no filters, sort_by=severity, sort_dir=desc, limit 1000) over a
//         plain pg pool, and answers them as JSON. No router, auth, validation, logging or request id.
//   core  the same one-route Koa app calling the product's core functions the way the route handler does:
//         authenticateToken (bearer token -> tenant, one query) and listFindings (Kysely), on a Kysely
//         database like the API's. No router, middleware, validation, logging or metrics.
// Both get the API's pool size (DATABASE_POOL_MAX's default, 10).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pg from 'pg';
import { authenticateToken, listFindings } from '@opsi/core';
import { createPostgresDatabase } from '@opsi/db';

/** listFindings (packages/core/src/pulse/findings.ts) as Kysely compiles it for the defaults. */
const LIST_FINDINGS_SQL = `
    select f.id, f.title, f.severity, f.domain, f.status, f.check_id, f.group_id, f.regressed,
           coalesce(r.savings, 0)::float8 as savings, r.effort, f.detected_at, f.last_seen_at,
           (select count(*)::int from finding_resources fr where fr.finding_id = f.id) as resource_count
    from findings f left join recommendations r on r.finding_id = f.id
    where f.tenant_id = $1
      and f.status <> 'confirmed'
      and true
      and true
    order by f.severity_rank desc, f.severity_rank desc, f.detected_at desc, f.id
    limit $2`;

const url = process.env.BENCH_DATABASE_URL!;
const max = Number(process.env.BENCH_POOL_MAX || 10);
const mode = process.env.BENCH_BARE_MODE === 'core' ? 'core' : 'bare';

let handle: (ctx: Koa.Context) => Promise<void>;
let close: () => Promise<void>;
if (mode === 'bare') {
  const tenantId = process.env.BENCH_TENANT_ID!;
  const pool = new pg.Pool({ connectionString: url, max, application_name: 'opsi-bench-bare' });
  pool.on('error', () => undefined);
  handle = async (ctx) => {
    const { rows } = await pool.query(LIST_FINDINGS_SQL, [tenantId, 1000]);
    ctx.body = { findings: rows };
  };
  close = () => pool.end();
} else {
  const database = createPostgresDatabase(url, { max, applicationName: 'opsi-bench-core' });
  handle = async (ctx) => {
    const secret = /^Bearer[ ]+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1] ?? '';
    const result = await authenticateToken(database.db, secret);
    if (!result.ok) {
      ctx.status = 401;
      ctx.body = { detail: result.reason };
      return;
    }
    ctx.body = {
      findings: await listFindings(database.db, result.auth.tenant.id, {
        sortBy: 'severity',
        sortDir: 'desc',
      }),
    };
  };
  close = () => database.close();
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'GET' || ctx.path !== '/findings') {
    ctx.status = 404;
    return;
  }
  await handle(ctx);
});

const server = createServer(app.callback());
server.keepAliveTimeout = 65_000; // as the API's
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void close().finally(() => process.exit(0)));
});
