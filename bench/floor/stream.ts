// The floor of a stream turn (GET /api/v1/stream): what the contract makes necessary, written by hand at
// its minimum with the same libraries (node:http, pg, ioredis, BullMQ) and the same durability (the run
// row committed in Postgres before its job is queued; the job in BullMQ with agent.turn's options; the
// events in a Redis stream). No framework, no logging, no validation library, no fairness. One file, two
// processes: FLOOR_ROLE=api (the HTTP side) or FLOOR_ROLE=worker (the bare worker).
//
// API, per request: the bearer token's row by its hash (one indexed statement joining user and tenant),
// the daily budget (one Lua check-and-increment), the run row (one insert into agent_runs, in a session
// made once at start), `Queue.add` with agent.turn's job options (job id = run id), then the event-stream
// head and the run's stream read with XREAD BLOCK (one blocking connection per open stream, from a free
// list) until its terminal event. Worker, per job: claims the run (one update: queued -> running,
// answering the prompt), XADDs run.started, then the rest of the scripted turn one XADD each as a
// streaming turn produces them (message.delta, message.completed, then run.completed with the stream's
// expiry in one MULTI) and the terminal row update (one statement). Frames are
// byte-for-byte the shape ours sends (`id:`, `event:`, `data:` {seq, run_id, kind, at, ...}).
//
// Environment: FLOOR_ROLE, DATABASE_URL, REDIS_URL, FLOOR_PREFIX (Redis key prefix), FLOOR_SESSION_ID
// (a session of the token's tenant, made by the caller), PORT (api; 0 = any: the port is sent over IPC),
// FLOOR_CONCURRENCY (worker, default 8), DATABASE_POOL_MAX (default 10, ours' default).
import { createHash } from 'node:crypto';
import http from 'node:http';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { QUEUES } from '@opsi/jobs';

const env = process.env;
const prefix = env.FLOOR_PREFIX!;
const bull = `${prefix}:bull`;
const queueName = 'floor-agent';
const streamKey = (runId: string) => `${prefix}:run:${runId}:events`;
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_MAX ?? 10) });
const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const TOKEN_SQL = `select t.id, t.scope, t.revoked_at, t.expires_at, u.id as user_id, n.id as tenant_id,
  n.daily_agent_budget from api_tokens t join users u on u.id = t.user_id join tenants n on n.id = t.tenant_id
  where t.token_hash = $1 and u.deleted_at is null and n.deleted_at is null`;
const RUN_SQL = `insert into agent_runs (tenant_id, session_id, token_id, prompt) values ($1, $2, $3, $4)
  returning id`;
const CLAIM_SQL = `update agent_runs set status = 'running', attempts = $2, started_at = now()
  where id = $1 and status in ('queued', 'running') returning prompt`;
const FINISH_SQL = `update agent_runs set status = 'completed', reply = $2, last_seq = $3, terminal_event = $4,
  finished_at = now() where id = $1 and status in ('queued', 'running')`;
const SPEND_LUA = `local used = redis.call('INCR', KEYS[1])
if used > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return -1 end
if used == 1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2])) end
return used`;

type Spending = Redis & { floorSpend(key: string, limit: number, ttl: number): Promise<number> };

function frame(seq: number, runId: string, kind: string, at: string, data: string): string {
  // data is the event's own JSON object; seq, run_id, kind and at go first, as ours puts them.
  const rest = data === '{}' ? '' : `,${data.slice(1, -1)}`;
  return `id: ${seq}\nevent: ${kind}\ndata: {"seq":${seq},"run_id":"${runId}","kind":"${kind}","at":"${at}"${rest}}\n\n`;
}

async function api() {
  const command = new Redis(redisUrl) as Spending;
  command.defineCommand('floorSpend', { numberOfKeys: 1, lua: SPEND_LUA });
  const queue = new Queue(queueName, { connection: command, prefix: bull });
  const readers: Redis[] = [];
  const sessionId = env.FLOOR_SESSION_ID!;

  const fail = (res: http.ServerResponse, status: number, detail: string) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ detail }));
  };

  async function turn(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://floor');
    if (url.pathname !== '/api/v1/stream') return fail(res, 404, 'Not found.');
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const prompt = url.searchParams.get('prompt');
    if (!token) return fail(res, 401, 'Invalid token.');
    if (!prompt) return fail(res, 400, 'prompt is required');
    const hash = createHash('sha256').update(token).digest('hex');
    const t = (await pool.query(TOKEN_SQL, [hash])).rows[0];
    if (!t || t.revoked_at || (t.expires_at && t.expires_at <= new Date()))
      return fail(res, 401, 'Invalid token.');
    if (t.scope !== 'read_write') return fail(res, 403, 'read_write needed');
    const day = new Date().toISOString().slice(0, 10);
    if ((await command.floorSpend(`${prefix}:budget:${t.id}:${day}`, t.daily_agent_budget, 90_000)) < 0)
      return fail(res, 429, 'Daily agent budget used up.');
    const run = (await pool.query(RUN_SQL, [t.tenant_id, sessionId, t.id, prompt])).rows[0] as { id: string };
    await queue.add(
      'turn',
      { run_id: run.id, tenant_id: t.tenant_id },
      { ...QUEUES.agent.jobs.turn.options, jobId: run.id },
    );
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-run-id': run.id,
    });
    res.write(': stream open\n\n');
    const reader = readers.pop() ?? new Redis(redisUrl, { maxRetriesPerRequest: null });
    let closed = false;
    res.once('close', () => (closed = true));
    try {
      let cursor = '0-0';
      for (;;) {
        const got = await reader.xread('BLOCK', 30_000, 'STREAMS', streamKey(run.id), cursor);
        if (closed) break;
        if (!got) continue;
        let out = '';
        let terminal = false;
        for (const [id, fields] of got[0]![1]) {
          cursor = id;
          out += frame(Number(id.slice(0, id.indexOf('-'))), run.id, fields[1]!, fields[3]!, fields[5]!);
          if (fields[7] === '1') terminal = true;
        }
        res.write(out);
        if (terminal) break;
      }
    } finally {
      readers.push(reader);
    }
    res.end();
  }

  const server = http.createServer((req, res) => {
    turn(req, res).catch((err: Error) => {
      if (!res.headersSent) fail(res, 500, err.message);
      else res.destroy(err);
    });
  });
  server.keepAliveTimeout = 65_000;
  await queue.waitUntilReady();
  server.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
    const port = (server.address() as { port: number }).port;
    process.send?.({ type: 'ready', port });
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void queue.close().finally(() => {
      command.disconnect();
      for (const r of readers) r.disconnect();
      void pool.end();
      process.exit(0);
    });
  });
}

async function worker() {
  const command = new Redis(redisUrl);
  const append = (runId: string, seq: number, kind: string, data: object, terminal: boolean) =>
    [
      streamKey(runId),
      `${seq}-0`,
      'k',
      kind,
      'a',
      new Date().toISOString(),
      'd',
      JSON.stringify(data),
      't',
      terminal ? '1' : '0',
    ] as const;
  const w = new Worker(
    queueName,
    async (job) => {
      const { run_id: runId } = job.data as { run_id: string };
      const claimed = await pool.query(CLAIM_SQL, [runId, job.attemptsMade + 1]);
      if (!claimed.rowCount) return;
      await command.xadd(...append(runId, 1, 'run.started', { attempt: job.attemptsMade + 1 }, false));
      const prompt = claimed.rows[0].prompt as string;
      const reply = `echo: ${prompt}`;
      // Each event is appended as the turn produces it (a streaming turn cannot batch what it has not
      // produced yet), the terminal one with the stream's expiry.
      await command.xadd(...append(runId, 2, 'message.delta', { text: reply }, false));
      await command.xadd(...append(runId, 3, 'message.completed', { text: reply }, false));
      const at = new Date().toISOString();
      await command
        .multi()
        .xadd(...append(runId, 4, 'run.completed', { reply }, true))
        .expire(streamKey(runId), 3600)
        .exec();
      const terminal = { seq: 4, run_id: runId, kind: 'run.completed', at, reply };
      await pool.query(FINISH_SQL, [runId, reply, 4, JSON.stringify(terminal)]);
    },
    {
      connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
      prefix: bull,
      concurrency: Number(env.FLOOR_CONCURRENCY ?? 8),
    },
  );
  await w.waitUntilReady();
  process.send?.({ type: 'ready' });
  process.once('SIGTERM', () => {
    void w.close().finally(() => {
      command.disconnect();
      void pool.end();
      process.exit(0);
    });
  });
}

if (env.FLOOR_ROLE === 'worker') await worker();
else await api();
