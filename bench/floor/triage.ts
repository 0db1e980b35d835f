// The floor of a triage alert (POST /api/v1/triage/alerts answered with the decided action): what the
// contract makes necessary, written by hand at its minimum with the same libraries (node:http, pg,
// ioredis, BullMQ) and the same durability (the alerts committed in triage_inbox before their job is
// queued; the decision written in Postgres before the answer). No framework, no logging, no validation
// library, no fairness or backlog bound, no rules, correlation or incidents; no coalescing of requests
// unless FLOOR_COALESCE=1 (then concurrent requests of a tenant go as one batch, as ours does).
// One file, two processes: FLOOR_ROLE=api or FLOOR_ROLE=worker.
//
// API, per request: the bearer token's row by its hash (one indexed statement), the body's alerts (an
// object or an array of objects with string title, fingerprint, source and severity), ONE insert of
// them into triage_inbox, `Queue.add` with triage.alerts' job options, and the job's result through
// QueueEvents (BullMQ's own way to wait for a job), answered as ours answers: 202 {accepted, batch_id,
// pending, events: [{id, action, incident_id}]}. Worker, per job: ONE statement decides the batch: an
// alert whose fingerprint has an event within the dedupe window (30 minutes, ours' default) is counted
// on it (deduplicated), any other opens a new event; the inbox rows are marked with their event and
// action; the decisions are the job's result. Unlike ours it does not serialize concurrent batches of a
// fingerprint (two concurrent first alerts of one fingerprint may open two events): a shortcut that can
// only make the floor cheaper.
//
// Environment: FLOOR_ROLE, DATABASE_URL, REDIS_URL, FLOOR_PREFIX, PORT (api; 0 = any, sent over IPC),
// FLOOR_CONCURRENCY (worker, default 50), DATABASE_POOL_MAX (default 10), FLOOR_COALESCE (api, 0 or 1),
// FLOOR_IN_FLIGHT (api, batches in flight per tenant when coalescing; default 2, ours' default).
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { QUEUES } from '@opsi/jobs';

const env = process.env;
const bull = `${env.FLOOR_PREFIX!}:bull`;
const queueName = 'floor-triage';
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_MAX ?? 10) });
const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const coalesce = env.FLOOR_COALESCE === '1';
const maxInFlight = Number(env.FLOOR_IN_FLIGHT ?? 2);

const TOKEN_SQL = `select t.id, t.scope, t.revoked_at, t.expires_at, n.id as tenant_id
  from api_tokens t join users u on u.id = t.user_id join tenants n on n.id = t.tenant_id
  where t.token_hash = $1 and u.deleted_at is null and n.deleted_at is null`;
const INSERT_SQL = `insert into triage_inbox (tenant_id, batch_id, alert)
  select $1, $2, a from jsonb_array_elements($3::jsonb) a returning id`;
const DECIDE_SQL = `
  with a as (
    select id, alert, alert->>'fingerprint' as fp from triage_inbox
    where id = any($1::bigint[]) and tenant_id = $2 and processed_at is null
  ), prev as (
    select distinct on (a.fp) a.fp, e.id as event_id from a
    join triage_events e on e.tenant_id = $2 and e.fingerprint = a.fp
      and e.last_at > now() - interval '30 minutes'
    order by a.fp, e.last_at desc
  ), bumped as (
    update triage_events e set count = e.count + c.n, last_at = now()
    from (select fp, count(*)::int as n from a group by fp) c join prev using (fp)
    where e.id = prev.event_id returning e.id
  ), fresh as (
    insert into triage_events (tenant_id, source, fingerprint, title, severity, action, count, first_at, last_at, labels)
    select $2, min(alert->>'source'), fp, min(alert->>'title'), min(alert->>'severity'), 'new', count(*), now(), now(), '{}'
    from a where fp not in (select fp from prev) group by fp
    returning id, fingerprint as fp
  ), decided as (
    select a.id, coalesce(p.event_id, f.id) as event_id,
      case when p.event_id is null and a.id = min(a.id) over (partition by a.fp) then 'new' else 'deduplicated' end as action
    from a left join prev p using (fp) left join fresh f using (fp)
  )
  update triage_inbox i set processed_at = now(), event_id = d.event_id, action = d.action
  from decided d where i.id = d.id
  returning i.id, i.event_id, i.action`;

interface Alert {
  title: string;
  fingerprint: string;
  source: string;
  severity: string;
}

function isAlert(a: unknown): a is Alert {
  const o = a as Record<string, unknown>;
  return (
    !!o &&
    typeof o === 'object' &&
    ['title', 'fingerprint', 'source', 'severity'].every((k) => typeof o[k] === 'string')
  );
}

async function api() {
  const command = new Redis(redisUrl);
  const queue = new Queue(queueName, { connection: command, prefix: bull });
  const events = new QueueEvents(queueName, {
    connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
    prefix: bull,
  });
  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  async function post(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || req.url !== '/api/v1/triage/alerts')
      return answer(res, 404, { detail: 'Not found.' });
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token) return answer(res, 401, { detail: 'Invalid token.' });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return answer(res, 400, { detail: 'Not JSON.' });
    }
    const alerts = Array.isArray(body) ? body : [body];
    if (!alerts.length || alerts.length > 1000 || !alerts.every(isAlert))
      return answer(res, 400, { detail: 'Not an alert.' });
    const hash = createHash('sha256').update(token).digest('hex');
    const t = (await pool.query(TOKEN_SQL, [hash])).rows[0];
    if (!t || t.revoked_at || (t.expires_at && t.expires_at <= new Date()))
      return answer(res, 401, { detail: 'Invalid token.' });
    if (t.scope !== 'read_write') return answer(res, 403, { detail: 'read_write needed' });
    const { batchId, events: decided } = await (coalesce
      ? coalesced(t.tenant_id, alerts)
      : runBatch(t.tenant_id, alerts));
    answer(res, 202, { accepted: alerts.length, batch_id: batchId, pending: false, events: decided });
  }

  /** One batch: one insert, one job, its result. */
  async function runBatch(tenantId: string, alerts: Alert[]) {
    const batchId = randomUUID();
    const inserted = await pool.query(INSERT_SQL, [tenantId, batchId, JSON.stringify(alerts)]);
    const ids = inserted.rows.map((r: { id: string }) => Number(r.id)).sort((x, y) => x - y);
    const job = await queue.add(
      'alerts',
      { tenant_id: tenantId, batch_id: batchId, inbox_ids: ids },
      { ...QUEUES.triage.jobs.alerts.options, jobId: batchId },
    );
    const decided = (await job.waitUntilFinished(events, 30_000)) as Array<{
      id: string;
      event_id: string;
      action: string;
    }>;
    const byId = new Map(decided.map((d) => [Number(d.id), d]));
    return {
      batchId,
      events: ids.map((id) => ({
        id: Number(byId.get(id)!.event_id),
        action: byId.get(id)!.action,
        incident_id: null,
      })),
    };
  }

  // FLOOR_COALESCE=1: requests of a tenant that arrive while FLOOR_IN_FLIGHT of its batches are being
  // decided wait and go together as one batch (what ours does, group commit), the minimum written by hand.
  type Batch = Awaited<ReturnType<typeof runBatch>>;
  const waiting = new Map<string, Array<{ alerts: Alert[]; done: (r: Batch | Error) => void }>>();
  const inFlight = new Map<string, number>();
  function coalesced(tenantId: string, alerts: Alert[]): Promise<Batch> {
    return new Promise((resolve, reject) => {
      const list = waiting.get(tenantId) ?? [];
      list.push({ alerts, done: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
      waiting.set(tenantId, list);
      if (list.length === 1) setImmediate(() => flush(tenantId));
    });
  }
  function flush(tenantId: string) {
    const list = waiting.get(tenantId);
    if (!list?.length || (inFlight.get(tenantId) ?? 0) >= maxInFlight) return;
    waiting.delete(tenantId);
    inFlight.set(tenantId, (inFlight.get(tenantId) ?? 0) + 1);
    runBatch(
      tenantId,
      list.flatMap((w) => w.alerts),
    )
      .then(
        (r) => {
          let at = 0;
          for (const w of list)
            w.done({ batchId: r.batchId, events: r.events.slice(at, (at += w.alerts.length)) });
        },
        (err: Error) => list.forEach((w) => w.done(err)),
      )
      .finally(() => {
        inFlight.set(tenantId, inFlight.get(tenantId)! - 1);
        flush(tenantId);
      });
  }

  const server = http.createServer((req, res) => {
    post(req, res).catch((err: Error) => {
      if (!res.headersSent) answer(res, 500, { detail: err.message });
      else res.destroy(err);
    });
  });
  server.keepAliveTimeout = 65_000;
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  server.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
    process.send?.({ type: 'ready', port: (server.address() as { port: number }).port });
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void Promise.allSettled([queue.close(), events.close()]).finally(() => {
      command.disconnect();
      void pool.end();
      process.exit(0);
    });
  });
}

async function worker() {
  const w = new Worker(
    queueName,
    async (job) => {
      const { tenant_id: tenantId, inbox_ids: ids } = job.data as { tenant_id: string; inbox_ids: number[] };
      return (await pool.query(DECIDE_SQL, [ids, tenantId])).rows;
    },
    {
      connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
      prefix: bull,
      concurrency: Number(env.FLOOR_CONCURRENCY ?? 50),
    },
  );
  await w.waitUntilReady();
  process.send?.({ type: 'ready' });
  process.once('SIGTERM', () => {
    void w.close().finally(() => {
      void pool.end();
      process.exit(0);
    });
  });
}

if (env.FLOOR_ROLE === 'worker') await worker();
else await api();
