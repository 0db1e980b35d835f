import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  readSse,
  script,
  seqs,
  startService,
  type ServiceProcess,
  type SseEvent,
  type TestMember,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';
import {
  clusterUnavailable,
  REDIS_SERVER,
  scanNode,
  startRedisCluster,
  type ClusterNode,
  type RedisCluster,
} from '../support/blackbox-cluster';

// Black-box checks of issue 30, "Redis Cluster", from the contract alone:
// - issue 30: "Redis Cluster (`REDIS_CLUSTER=true`): queues, run streams, budgets, fair queuing and
//   every Lua script correct on a 3-master cluster; keys of one script share a slot, different runs
//   and queues spread over slots"; "the runs, triage, fairness and budget e2e suites pass against
//   that real cluster".
// - decisions.md, Wave 3, "Scale-out on real engines": "`REDIS_CLUSTER=true`: `REDIS_URL` names a
//   seed node of a Redis Cluster; the service discovers the rest. Keys that one script or
//   transaction touches share a hash tag; different queues' and runs' keys spread over the slots."
// - api-v1.md and docs/api.md for ask/stream/attach, triage alerts and the daily agent budget;
//   docs/operations.md and docs/reliability.md for fairness.
// A real 3-master Redis Cluster (this machine's redis-server, no replicas) on free ports; the API, a
// scheduler and workers as real processes given ONE seed node; a client speaking HTTP and SSE; the
// key placement read from the cluster itself. Never asserts on durations: statuses, counts, order.

const TERMINAL = ['run.completed', 'run.failed'];
const QUEUES = ['agent', 'pulse', 'plans', 'reports', 'triage'];
const BUDGET = 3;

const unavailable = clusterUnavailable();
if (unavailable)
  console.warn(`blackbox-redis-cluster: skipped, ${unavailable}: a Redis Cluster needs redis-server`);

let cluster: RedisCluster;
let svc: SplitServices;
let base = '';
/** Every process started, stopped ones included: their output is read for CROSSSLOT at the end. */
const processes: Array<{ name: string; p: ServiceProcess }> = [];
let agentWorker: ServiceProcess | undefined;
/** An API process of this file's own (svc.stop does not stop it). */
let secondApi: ServiceProcess | undefined;
let a: TestMember;
let b: TestMember;
let tokA = '';
let tokB = '';
/** Every run a client saw (X-Run-Id or run_id of its events). */
const runIds = new Set<string>();
/** Tokens that spent budget: each has a counter in Redis (docs/operations.md, the keys table). */
const budgetTokenIds: string[] = [];

const streamUrl = (params: Record<string, string>) => `${base}/api/v1/stream?${new URLSearchParams(params)}`;
const attachUrl = (params: Record<string, string>) =>
  `${base}/api/v1/stream/attach?${new URLSearchParams(params)}`;
const tag = () => randomBytes(4).toString('hex');
const alive = (p: ServiceProcess) => p.child.exitCode === null && p.child.signalCode === null;

/** A whole run as one client saw it: 1..n without gap or duplicate, run.started first, one terminal event, last. */
function expectWholeRun(events: SseEvent[], what = 'run') {
  const summary = `${what}: ${JSON.stringify(events.map((e) => [e.id, e.event]))}`;
  expect(events.length, summary).toBeGreaterThan(1);
  expect(seqs(events), summary).toEqual(events.map((_, i) => i + 1));
  for (const e of events) {
    expect(e.data.seq, summary).toBe(e.id);
    expect(e.data.kind, summary).toBe(e.event);
  }
  expect(events[0]!.event, summary).toBe('run.started');
  expect(
    events.filter((e) => TERMINAL.includes(e.event)),
    summary,
  ).toHaveLength(1);
  expect(TERMINAL, summary).toContain(events.at(-1)!.event);
  expect(new Set(events.map((e) => e.data.run_id)).size, summary).toBe(1);
  runIds.add(events[0]!.data.run_id);
}

/** GET /stream; hangs up once the head arrives (the run is durable). */
async function openStream(token: string, prompt: string, session: string) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const res = await fetch(streamUrl({ prompt, session_id: session }), {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    let body: any;
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) controller.abort();
    else body = await res.json().catch(() => undefined);
    const runId = res.headers.get('x-run-id');
    if (res.status === 200 && runId) runIds.add(runId);
    return { status: res.status, headers: res.headers, body, runId };
  } finally {
    clearTimeout(timer);
  }
}

/** The stored events of a session's latest run, up to its terminal event. */
async function runEvents(token: string, session: string) {
  const r = await readSse(attachUrl({ session_id: session, after_seq: '0' }), {
    token,
    timeoutMs: 100_000,
    stopAfter: (evs) => evs.some((e) => TERMINAL.includes(e.event)),
  });
  expect(r.status, `attach ${session}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.events;
}

async function ask(token: string, prompt: string, session: string) {
  const res = await call(base, 'POST', '/api/v1/ask', { token, body: { prompt, session_id: session } });
  const runId = res.headers.get('x-run-id');
  if (res.status === 200 && runId) runIds.add(runId);
  return res;
}

async function startWorker(name: string, env: Record<string, string>) {
  const p = await svc.startWorker({ AGENT_ENGINE: 'scripted', ...env });
  processes.push({ name, p });
  return p;
}

describe.skipIf(unavailable !== undefined)(
  `REDIS_CLUSTER=true against a real 3-master Redis Cluster (${REDIS_SERVER})`,
  () => {
    beforeAll(async () => {
      cluster = await startRedisCluster(3);
      svc = await startSplitServices({
        worker: false,
        scheduler: true,
        env: {
          REDIS_CLUSTER: 'true',
          // One seed node: the service must discover the other two masters.
          REDIS_URL: cluster.seedUrl,
          AGENT_ENGINE: 'scripted',
          TRIAGE_WAIT_MS: '30000',
        },
      });
      base = svc.base;
      processes.push({ name: 'api', p: svc.api });
      if (svc.scheduler) processes.push({ name: 'scheduler', p: svc.scheduler });
      await startWorker('worker (pulse, plans, reports, triage)', {
        WORKER_QUEUES: 'pulse,plans,reports,triage',
      });
      agentWorker = await startWorker('worker (agent)', { WORKER_QUEUES: 'agent' });
      a = await createTenantWithUser(svc.t, { tier: 'team' });
      b = await createTenantWithUser(svc.t, { tier: 'team' });
      tokA = (await mintTestToken(svc.t, a, 'read_write')).token;
      tokB = (await mintTestToken(svc.t, b, 'read_write')).token;
    }, 300_000);

    afterAll(async () => {
      await secondApi?.stop();
      await svc?.stop();
      await cluster?.destroy();
    });

    describe('runs (api-v1.md Events: "the SSE id: is a monotonically increasing sequence number per run. Reattach with after_seq replays events with a greater sequence, then continues live")', () => {
      it('GET /stream delivers 1..n without gap, ending in exactly one terminal event', async () => {
        const res = await readSse(
          streamUrl({
            prompt: script([
              { delta: 'a' },
              { tool: 'lookup', input: { q: 1 }, output: '3 rows' },
              { deltas: 3 },
            ]),
          }),
          { token: tokA },
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.aborted).toBe(false);
        expectWholeRun(res.events, 'stream');
        expect(res.events.at(-1)).toMatchObject({ event: 'run.completed' });
        expect(res.events[0]!.data.run_id).toBe(res.headers.get('x-run-id'));
      });

      it('POST /ask answers {reply, session_id}; attach after_seq=0 replays the same run whole', async () => {
        const session = `ask-${tag()}`;
        const res = await ask(tokA, script([{ delta: 'Hello ' }, { delta: 'cluster' }]), session);
        expect(res.status, res.text).toBe(200);
        expect(res.body).toEqual({ reply: 'Hello cluster', session_id: session });
        const replay = await readSse(attachUrl({ session_id: session, after_seq: '0' }), { token: tokA });
        expect(replay.status).toBe(200);
        expectWholeRun(replay.events, 'replay of /ask');
        expect(replay.events.at(-1)).toMatchObject({
          event: 'run.completed',
          data: { reply: 'Hello cluster' },
        });
      });

      it('dropped after k events while the run goes on: attach after_seq=k gets k+1.. exactly once; after the end, the same again', async () => {
        const session = `drop-${tag()}`;
        const steps = [{ deltas: 3 }, { sleep: 2000 }, { deltas: 3 }, { delta: 'end' }];
        const first = await readSse(streamUrl({ prompt: script(steps), session_id: session }), {
          token: tokA,
          stopAfter: (events) => events.length >= 3,
        });
        expect(first.status).toBe(200);
        expect(first.aborted).toBe(true);
        const k = first.events.at(-1)!.id;
        expect(seqs(first.events)).toEqual(first.events.map((_, i) => i + 1));
        expect(TERMINAL).not.toContain(first.events.at(-1)!.event);

        const rest = await readSse(attachUrl({ session_id: session, after_seq: String(k) }), {
          token: tokA,
          timeoutMs: 90_000,
        });
        expect(rest.status).toBe(200);
        expect(rest.aborted).toBe(false);
        expect(rest.events[0]!.id).toBe(k + 1);
        expectWholeRun([...first.events, ...rest.events], 'first part + attach after_seq=k');
        expect(rest.events.at(-1)).toMatchObject({ event: 'run.completed' });
        expect(rest.events.at(-1)!.data.reply).toContain('end');

        // After the end: the stored events replay the same, from k+1, once.
        const again = await readSse(attachUrl({ session_id: session, after_seq: String(k) }), {
          token: tokA,
        });
        expect(again.events.map((e) => e.data)).toEqual(rest.events.map((e) => e.data));
        const whole = await readSse(attachUrl({ session_id: session, after_seq: '0' }), { token: tokA });
        expectWholeRun(whole.events, 'attach after_seq=0 after the end');
        expect(whole.events.slice(0, k).map((e) => e.data)).toEqual(first.events.map((e) => e.data));
        expect(whole.events.slice(k).map((e) => e.data)).toEqual(rest.events.map((e) => e.data));
      });

      it('a second API process given another node as its seed serves the same runs: streamed through one, re-attached through the other with after_seq=k, k+1.. exactly once', async () => {
        const other = cluster.nodes.find((n) => `redis://${n.host}:${n.port}` !== cluster.seedUrl)!;
        secondApi = await startService(
          { ...svc.env, REDIS_URL: `redis://${other.host}:${other.port}` },
          { entry: 'apps/api/src/main.ts' },
        );
        processes.push({ name: 'api (another seed)', p: secondApi });
        const base2 = secondApi.url;
        for (const [from, to] of [
          [base, base2],
          [base2, base],
        ] as const) {
          const session = `two-apis-${tag()}`;
          const steps = [{ deltas: 2 }, { sleep: 1500 }, { deltas: 2 }, { delta: 'end' }];
          const first = await readSse(
            `${from}/api/v1/stream?${new URLSearchParams({ prompt: script(steps), session_id: session })}`,
            { token: tokA, stopAfter: (events) => events.length >= 2 },
          );
          expect(first.status, JSON.stringify(first.body)).toBe(200);
          expect(first.aborted).toBe(true);
          const k = first.events.at(-1)!.id;
          const rest = await readSse(
            `${to}/api/v1/stream/attach?${new URLSearchParams({ session_id: session, after_seq: String(k) })}`,
            { token: tokA, timeoutMs: 90_000 },
          );
          expect(rest.status, JSON.stringify(rest.body)).toBe(200);
          expect(rest.events[0]?.id, `${from} -> ${to}`).toBe(k + 1);
          expectWholeRun([...first.events, ...rest.events], `streamed via ${from}, attached via ${to}`);
          expect(rest.events.at(-1)).toMatchObject({ event: 'run.completed' });
        }
      });

      it('12 runs at once (two tenants): each client sees its run 1..n without gap, each replay equal to what it saw', async () => {
        const jobs = Array.from({ length: 12 }, (_, i) => ({
          token: i % 2 ? tokB : tokA,
          session: `many-${i}-${tag()}`,
          word: `w${i}`,
        }));
        const results = await Promise.all(
          jobs.map((j) =>
            readSse(
              streamUrl({
                prompt: script([{ delta: `${j.word} ` }, { sleep: 300 }, { deltas: 2 }, { delta: 'end' }]),
                session_id: j.session,
              }),
              { token: j.token, timeoutMs: 100_000 },
            ),
          ),
        );
        for (const [i, r] of results.entries()) {
          expect(r.status, `run ${i}: ${JSON.stringify(r.body)}`).toBe(200);
          expectWholeRun(r.events, `run ${i}`);
          expect(r.events.at(-1)!.event).toBe('run.completed');
          expect(r.events.at(-1)!.data.reply).toContain(jobs[i]!.word);
        }
        expect(new Set(results.map((r) => r.events[0]!.data.run_id)).size).toBe(jobs.length);
        const replays = await Promise.all(
          jobs.map((j) => readSse(attachUrl({ session_id: j.session, after_seq: '0' }), { token: j.token })),
        );
        for (const [i, r] of replays.entries())
          expect(r.events.map((e) => e.data)).toEqual(results[i]!.events.map((e) => e.data));
      });
    });

    describe('triage (docs/api.md "Triage": "It answers 202 once the triage job has decided the batch"; fingerprinted, deduplicated, "opens an incident (source: \\"triage\\", SEV1 for critical, SEV2 for high)")', () => {
      const post = (token: string, body: unknown) =>
        call(base, 'POST', '/api/v1/triage/alerts', { token, body });

      it('a critical alert opens an incident (SEV1, source triage); its repeat is deduplicated into the same group; a low one is new', async () => {
        const fp = `bbc-crit-${tag()}`;
        const title = `Cluster check critical ${fp}`;
        const first = await post(tokA, { title, severity: 'critical', source: 'bbcluster', fingerprint: fp });
        expect(first.status, first.text).toBe(202);
        expect(first.body.pending, first.text).toBe(false);
        expect(first.body.events, first.text).toHaveLength(1);
        expect(first.body.events[0].action, first.text).toBe('incident_opened');
        const incidentId = first.body.events[0].incident_id as string;
        expect(typeof incidentId).toBe('string');
        const inc = await call(base, 'GET', `/api/v1/incidents/${incidentId}`, { token: tokA });
        expect(inc.status, inc.text).toBe(200);
        expect(inc.body).toMatchObject({ id: incidentId, severity: 'SEV1', source: 'triage' });

        const repeat = await post(tokA, {
          title,
          severity: 'critical',
          source: 'bbcluster',
          fingerprint: fp,
        });
        expect(repeat.status, repeat.text).toBe(202);
        expect(repeat.body.pending, repeat.text).toBe(false);
        expect(repeat.body.events, repeat.text).toHaveLength(1);
        expect(repeat.body.events[0].action, repeat.text).toBe('deduplicated');

        const low = await post(tokA, {
          title: `low ${fp}`,
          severity: 'low',
          source: 'bbcluster',
          fingerprint: `${fp}-low`,
        });
        expect(low.status, low.text).toBe(202);
        expect(low.body.pending, low.text).toBe(false);
        expect(
          low.body.events.map((e: any) => [e.action, e.incident_id]),
          low.text,
        ).toEqual([['new', null]]);

        const ev = await call(base, 'GET', '/api/v1/triage/events?limit=500', { token: tokA });
        expect(ev.status, ev.text).toBe(200);
        const groups = (ev.body.events as any[]).filter((e) => e.fingerprint === fp);
        expect(groups.map((g) => ({ action: g.action, count: g.count, incident_id: g.incident_id }))).toEqual(
          [{ action: 'incident_opened', count: 2, incident_id: incidentId }],
        );
        const incidents = await call(base, 'GET', '/api/v1/incidents?limit=500', { token: tokA });
        expect((incidents.body.incidents as any[]).filter((i) => i.id === incidentId)).toHaveLength(1);
        expect(
          (incidents.body.incidents as any[]).filter((i) => String(i.description ?? '').includes(fp)).length,
        ).toBeLessThanOrEqual(1);
      });

      it('two tenants post at once: a batch of three high alerts each opens three incidents per tenant, one decision per alert, in order', async () => {
        const batch = (who: string) =>
          Array.from({ length: 3 }, (_, i) => ({
            title: `${who} high ${i}`,
            severity: 'high',
            source: 'bbcluster',
            fingerprint: `bbc-${who}-${i}-${tag()}`,
          }));
        const [ra, rb] = await Promise.all([post(tokA, batch('a')), post(tokB, batch('b'))]);
        for (const [who, r, token] of [
          ['A', ra, tokA],
          ['B', rb, tokB],
        ] as const) {
          expect(r.status, `${who}: ${r.text}`).toBe(202);
          expect(r.body.accepted, r.text).toBe(3);
          expect(r.body.pending, r.text).toBe(false);
          expect(
            r.body.events.map((e: any) => e.action),
            r.text,
          ).toEqual(['incident_opened', 'incident_opened', 'incident_opened']);
          const ids = r.body.events.map((e: any) => e.incident_id);
          expect(new Set(ids).size).toBe(3);
          for (const id of ids) {
            const inc = await call(base, 'GET', `/api/v1/incidents/${id}`, { token });
            expect(inc.status, `${who} incident ${id}: ${inc.text}`).toBe(200);
            expect(inc.body.severity).toBe('SEV2');
          }
        }
      });
    });

    describe('the daily agent budget (api-v1.md Limits: "Capped per token per UTC day; exceeding gives 429"; Errors: "only agent endpoints are affected, all others keep working")', () => {
      let c: TestMember;
      beforeAll(async () => {
        c = await createTenantWithUser(svc.t, { tier: 'team', budget: BUDGET });
      });

      it(`a token of a tenant with a budget of ${BUDGET}: ${BUDGET} turns answered, the next /ask and /stream 429 {detail} + Retry-After; attach and other endpoints keep working`, async () => {
        const minted = await mintTestToken(svc.t, c, 'read_write', { name: 'seq' });
        budgetTokenIds.push(minted.id);
        const tok = minted.token;
        const statuses: number[] = [];
        for (let i = 0; i < BUDGET; i++) {
          const r = await ask(tok, script([{ delta: `turn ${i}` }]), `budget-${i}`);
          statuses.push(r.status);
        }
        const over = await ask(tok, script([{ delta: 'over' }]), 'budget-over');
        statuses.push(over.status);
        expect(statuses, over.text).toEqual([...Array(BUDGET).fill(200), 429]);
        expect(typeof over.body?.detail).toBe('string');
        expect(over.headers.get('retry-after')).toBeTruthy();
        const overStream = await openStream(tok, script([{ delta: 'over' }]), 'budget-over-stream');
        expect(overStream.status, JSON.stringify(overStream.body)).toBe(429);
        expect(typeof overStream.body?.detail).toBe('string');
        // the refused turns left no run
        for (const s of ['budget-over', 'budget-over-stream']) {
          const at = await call(base, 'GET', `/api/v1/stream/attach?session_id=${s}&after_seq=0`, {
            token: tok,
          });
          expect(at.status, `attach ${s}`).toBe(404);
        }
        const replay = await runEvents(tok, 'budget-0');
        expectWholeRun(replay, 'attach over budget');
        expect((await call(base, 'GET', '/api/v1/me', { token: tok })).status).toBe(200);
      });

      it(`${BUDGET + 3} turns of another token of that tenant at once: exactly ${BUDGET} admitted, the rest 429 (the cap is per token, and atomic)`, async () => {
        const minted = await mintTestToken(svc.t, c, 'read_write', { name: 'burst' });
        budgetTokenIds.push(minted.id);
        const tok = minted.token;
        const answers = await Promise.all(
          Array.from({ length: BUDGET + 3 }, (_, i) =>
            openStream(tok, script([{ delta: `burst ${i}` }]), `burst-${i}`),
          ),
        );
        const statuses = answers.map((r) => r.status).sort();
        expect(statuses, JSON.stringify(answers.map((r) => [r.status, r.body]))).toEqual([
          ...Array(BUDGET).fill(200),
          ...Array(3).fill(429),
        ]);
        // The admitted ones run to their end.
        for (const [i, r] of answers.entries()) {
          if (r.status !== 200) continue;
          const events = await runEvents(tok, `burst-${i}`);
          expectWholeRun(events, `burst-${i}`);
          expect(events.at(-1)!.event).toBe('run.completed');
        }
      });
    });

    describe('fairness (docs/operations.md: "a tenant that queues thousands of turns ... delays another tenant\'s next job by about one job per busy tenant, not by its backlog"; reliability.md: "B\'s turn queued behind 30 of A\'s starts among the first three")', () => {
      it("one worker slot: B's turn queued behind 30 of A's starts among the first three; A's keep their order", async () => {
        // No agent worker while the turns are queued.
        expect(agentWorker && alive(agentWorker)).toBe(true);
        const stopCode = await agentWorker!.stop();
        const turn = (t: string) => script([{ sleep: 5 }, { delta: t }]);
        const aSessions: string[] = [];
        for (let i = 0; i < 30; i++) {
          const s = `fair-a-${String(i).padStart(2, '0')}-${tag()}`;
          const r = await openStream(tokA, turn(`a${i}`), s);
          expect(r.status, `A turn ${i}: ${JSON.stringify(r.body)}`).toBe(200);
          aSessions.push(s);
        }
        const bSession = `fair-b-${tag()}`;
        const rb = await openStream(tokB, turn('b'), bSession);
        expect(rb.status, JSON.stringify(rb.body)).toBe(200);

        agentWorker = await startWorker('worker (agent, one slot)', {
          WORKER_QUEUES: 'agent',
          WORKER_CONCURRENCY_AGENT: '1',
        });
        const startedAt = async (token: string, s: string) => {
          const events = await runEvents(token, s);
          expectWholeRun(events, s);
          expect(events.at(-1)!.event, s).toBe('run.completed');
          return Date.parse(events[0]!.data.at);
        };
        // One slot: the runs start one after the other, so their run.started stamps give the order.
        // (B last before a stable sort: a tie is counted against B.)
        const order: Array<{ who: string; at: number }> = [];
        for (const [i, s] of aSessions.entries()) order.push({ who: `A${i}`, at: await startedAt(tokA, s) });
        order.push({ who: 'B', at: await startedAt(tokB, bSession) });
        order.sort((x, y) => x.at - y.at);
        const names = order.map((o) => o.who);
        expect(names.indexOf('B'), names.join(' ')).toBeLessThan(3);
        expect(
          names.filter((n) => n !== 'B'),
          names.join(' '),
        ).toEqual(aSessions.map((_, i) => `A${i}`));
        expect(stopCode, 'the agent worker stopped on SIGTERM with exit 0').toBe(0);
      }, 240_000);
    });

    describe('key placement, asked of the cluster itself (decisions.md: "Keys that one script or transaction touches share a hash tag; different queues\' and runs\' keys spread over the slots")', () => {
      interface Placed {
        key: string;
        slot: number;
        node: ClusterNode;
      }
      /** The queue a key belongs to: BullMQ's keys carry "bull" and the queue's name as a whole segment. */
      const queueOf = (key: string) =>
        key.includes('bull') ? QUEUES.find((q) => new RegExp(`[:{]${q}[:}]`).test(key)) : undefined;
      let placed: Placed[] = [];

      beforeAll(async () => {
        const prefix = svc.t.redisPrefix;
        placed = [];
        for (const node of cluster.nodes) {
          for (const key of await scanNode(node, `*${prefix}*`)) {
            const slot = Number(await node.client.call('CLUSTER', 'KEYSLOT', key));
            placed.push({ key, slot, node });
          }
        }
        const perMaster = cluster.nodes.map((n) => `${n.port}: ${placed.filter((p) => p.node === n).length}`);
        console.info(
          `blackbox-redis-cluster: ${placed.length} keys under ${prefix}, per master ${perMaster.join(', ')}`,
        );
      });

      it('the budget counters are in the cluster; every key is on the master that serves its slot (CLUSTER KEYSLOT, CLUSTER SLOTS, CLUSTER COUNTKEYSINSLOT)', async () => {
        expect(placed.length).toBeGreaterThan(0);
        expect(budgetTokenIds).toHaveLength(2);
        for (const id of budgetTokenIds)
          expect(
            placed.filter((p) => p.key.includes(id)).map((p) => p.key),
            `budget counter of token ${id}`,
          ).not.toEqual([]);
        const misplaced: string[] = [];
        for (const p of placed) {
          const owner = await cluster.ownerOf(p.slot);
          if (owner !== p.node)
            misplaced.push(`${p.key} (slot ${p.slot}) on ${p.node.port}, served by ${owner.port}`);
          const count = Number(await p.node.client.call('CLUSTER', 'COUNTKEYSINSLOT', p.slot));
          if (count < 1) misplaced.push(`${p.key}: COUNTKEYSINSLOT ${p.slot} is ${count}`);
        }
        expect(misplaced).toEqual([]);
      });

      it("the service's keys live on more than one master, not only on the seed node it was given", () => {
        const byNode = new Map<number, number>();
        for (const p of placed) byNode.set(p.node.port, (byNode.get(p.node.port) ?? 0) + 1);
        const summary = JSON.stringify(Object.fromEntries(byNode));
        expect(byNode.size, `keys per master port: ${summary}`).toBeGreaterThan(1);
        const seed = cluster.nodes[0]!.port;
        expect(
          [...byNode.keys()].some((port) => port !== seed),
          summary,
        ).toBe(true);
      });

      it("each run has one event stream in the cluster; different runs' streams spread over several slots and masters", () => {
        expect(runIds.size).toBeGreaterThanOrEqual(40);
        const streamsOfRun = new Map<string, Placed[]>();
        for (const runId of runIds)
          // The run's event stream (docs/operations.md: `…:<run_id>:events`), not a queue's job hash.
          streamsOfRun.set(
            runId,
            placed.filter((p) => p.key.includes(`${runId}:events`) && !queueOf(p.key)),
          );
        // A finished run's event stream stays RUN_STREAM_TTL_SECONDS (a day): every run has one.
        const notOne = [...streamsOfRun]
          .filter(([, keys]) => keys.length !== 1)
          .map(([id, keys]) => `${id}: ${JSON.stringify(keys.map((k) => k.key))}`);
        expect(notOne, 'runs without exactly one event stream').toEqual([]);
        const streams = [...streamsOfRun.values()].flat();
        const slots = new Set(streams.map((p) => p.slot));
        const masters = new Set(streams.map((p) => p.node.port));
        console.info(
          `blackbox-redis-cluster: ${streams.length} run streams in ${slots.size} slots on ${masters.size} masters`,
        );
        expect(slots.size, "distinct slots of the runs' streams").toBeGreaterThan(1);
        expect(masters.size, "masters holding runs' streams").toBeGreaterThan(1);
      });

      it("each queue's keys share one slot; the agent and triage queues (and any other with keys) are on different slots", () => {
        const prefix = svc.t.redisPrefix;
        const queueSlots = new Map<string, Set<number>>();
        for (const q of QUEUES) {
          const mine = placed.filter((p) => p.key.includes(prefix) && queueOf(p.key) === q);
          if (mine.length) queueSlots.set(q, new Set(mine.map((p) => p.slot)));
        }
        const summary = JSON.stringify(Object.fromEntries([...queueSlots].map(([q, s]) => [q, [...s]])));
        console.info(`blackbox-redis-cluster: queue slots ${summary}`);
        expect([...queueSlots.keys()], summary).toEqual(expect.arrayContaining(['agent', 'triage']));
        for (const [q, slots] of queueSlots) expect(slots.size, `${q}: ${summary}`).toBe(1);
        const distinct = new Set([...queueSlots.values()].map((s) => [...s][0]));
        expect(distinct.size, summary).toBe(queueSlots.size);
      });

      it('no CROSSSLOT error in any process output (API, scheduler, workers)', () => {
        const found = processes
          .filter(({ p }) => /CROSSSLOT/.test(p.output()))
          .map(
            ({ name, p }) =>
              `${name}: ${p
                .output()
                .split('\n')
                .filter((l) => l.includes('CROSSSLOT'))
                .slice(0, 3)
                .map((l) => l.slice(0, 600))
                .join('\n')}`,
          );
        expect(processes.length).toBeGreaterThanOrEqual(4);
        expect(found).toEqual([]);
      });
    });
  },
);
