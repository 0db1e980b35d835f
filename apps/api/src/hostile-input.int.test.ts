import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@opsi/db';
import { JobProducer, type QueueName } from '@opsi/jobs';
import {
  createTenantWithUser,
  createTestContext,
  loginOverHttp,
  mintTestToken,
  startTestApi,
  startTestWorker,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { hostileAuth, hostileCases, type HostileCase } from '@opsi/test-support/hostile';
import type { RunningApi } from './server';

// Every operation of the OpenAPI document, fed hostile input in its path parameters, its query and
// its body: NUL bytes, bytes that are not UTF-8, lone surrogates, deep JSON, huge strings, odd numbers,
// wrong types. No answer is a 5xx; every refusal is {detail} and writes nothing (the row counts of the
// tenant's tables and the audit log are unchanged). A hostile-looking value that is valid (a prompt of
// "0x10") is a valid request: what it writes is what any valid request would.

let t: TestContext;
let api: RunningApi;
let worker: { close(): Promise<void> };
let member: TestMember;
let token: string;
let session: { cookie: string; csrf: string };
let countSql: string;
let producer: JobProducer;

type Json = Record<string, any>;
let doc: Json;
/** Only agent turns run: a job a valid request queues elsewhere could write during a later refusal. */
const SERVED: QueueName[] = ['agent'];

beforeAll(async () => {
  t = await createTestContext({ BODY_LIMIT_BYTES: '65536' });
  api = await startTestApi(t);
  // /ask waits for its run: a worker (the scripted engine echoes plain prompts) ends it.
  // Only the agent pool: a queued morning report (a valid POST) written later would change the row
  // counts under a later refusal.
  worker = await startTestWorker(t, { WORKER_QUEUES: SERVED });
  member = await createTenantWithUser(t, { budget: 100_000 });
  token = (await mintTestToken(t, member, 'read_write')).token;
  session = await loginOverHttp(api.url, member.user.email, member.password);
  producer = new JobProducer(t.redis, t.redisPrefix);
  doc = (await (await fetch(`${api.url}/api/v1/openapi.json`)).json()) as Json;
  // One statement that counts the tenant's rows in every table that has a tenant_id.
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.columns
     where table_schema = 'public' and column_name = 'tenant_id' order by table_name`.execute(t.db);
  countSql = tables.rows
    .map(
      (r) => `select '${r.table_name}' as t, count(*)::int as n from "${r.table_name}" where tenant_id = $1`,
    )
    .join(' union all ');
}, 120_000);
afterAll(async () => {
  await worker?.close();
  await api?.close();
  await t?.close();
});

async function snapshot(): Promise<Record<string, number>> {
  const { rows } = await sql
    .raw<{ t: string; n: number }>(countSql.replaceAll('$1', `'${member.tenant.id}'`))
    .execute(t.db);
  return Object.fromEntries(rows.map((r) => [r.t, r.n]));
}

/**
 * Waits until none of the tenant's runs is queued or running and no job of a served queue waits or runs.
 * Jobs of the other queues (a morning report, a plan, triage) stay queued, never run, so never write.
 */
async function runsSettled() {
  for (let i = 0; i < 300; i++) {
    let busy = 0;
    for (const name of SERVED) {
      const counts = await producer.queue(name).getJobCounts('active', 'waiting', 'delayed', 'prioritized');
      busy += Object.values(counts).reduce((a, b) => a + b, 0);
    }
    if (busy > 0) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    const open = await t.db
      .selectFrom('agent_runs')
      .select('id')
      .where('tenant_id', '=', member.tenant.id)
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    if (!open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('runs did not settle');
}

const cases = () => hostileCases(doc);
const authFor = (c: HostileCase) => hostileAuth(doc, c, token, session);

describe('hostile input on every operation of the OpenAPI document', () => {
  it('never answers 5xx; every refusal is {detail} and writes nothing', async () => {
    const all = cases();
    expect(all.length).toBeGreaterThan(500);
    const failures: string[] = [];
    let baseline = await snapshot();
    let refused = 0;
    for (const c of all) {
      const controller = new AbortController();
      let status: number;
      let text = '';
      try {
        const res = await fetch(`${api.url}${c.path}`, {
          method: c.method,
          headers: { ...authFor(c), ...c.headers },
          ...(c.body !== undefined
            ? { body: typeof c.body === 'string' ? c.body : new Uint8Array(c.body) }
            : {}),
          signal: AbortSignal.any([controller.signal, AbortSignal.timeout(30_000)]),
        });
        status = res.status;
        const type = res.headers.get('content-type') ?? '';
        // An event stream that opened is a valid request: its status is all this needs.
        if (type.startsWith('text/event-stream')) controller.abort();
        else text = await res.text();
      } catch (e) {
        if (!controller.signal.aborted) {
          failures.push(`${c.method} ${c.what}: ${String(e)}`);
          continue;
        }
        status = 200;
      }
      // A read cannot write, but for the one that starts a run; the rest are counted after each request.
      const writes = c.method !== 'GET' || c.path.startsWith('/api/v1/stream?');
      const after = writes ? await snapshot() : baseline;
      if (status >= 500)
        failures.push(`${c.method} ${c.path.slice(0, 80)} (${c.what}): ${status} ${text.slice(0, 200)}`);
      else if (status >= 400) {
        refused++;
        // 431 (headers too large) is Node's own, before the app: no body to check.
        if (status !== 431 && !/^\{"detail":/.test(text) && !/tier_restricted/.test(text)) {
          failures.push(`${c.method} ${c.what}: ${status} without {detail}: ${text.slice(0, 120)}`);
        }
        if (JSON.stringify(after) !== JSON.stringify(baseline)) {
          failures.push(`${c.method} ${c.what}: ${status} but wrote ${JSON.stringify({ baseline, after })}`);
        }
      }
      if (status < 300) {
        // A valid request: what it writes is what a valid request writes, now or through the run it
        // started (the worker writes the reply when the run ends).
        await runsSettled();
        baseline = await snapshot();
      }
      if (c.path.startsWith('/auth/logout') && status < 300) {
        session = await loginOverHttp(api.url, member.user.email, member.password);
        baseline = await snapshot();
      }
    }
    expect(failures).toEqual([]);
    expect(refused).toBeGreaterThan(all.length / 2);
  }, 300_000);
});
