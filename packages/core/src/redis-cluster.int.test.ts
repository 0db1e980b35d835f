import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '@opsi/contracts';
import {
  createQueueWorker,
  fairKey,
  JobProducer,
  QUEUE_NAMES,
  RunEventLog,
  RunStreamHub,
  TimelineLog,
  type Worker,
} from '@opsi/jobs';
import { createLogger } from '@opsi/logger';
import {
  createRedis,
  deleteKeys,
  keySlot,
  masters,
  pingRedis,
  STREAM_SHARDS,
  type Cluster,
  type RedisClient,
} from '@opsi/redis';
import { until } from '@opsi/test-support';
import {
  moveSlot,
  redisClusterUnavailable,
  startRedisCluster,
  type RedisCluster,
} from '@opsi/test-support/redis-cluster';
import { AgentBudget } from './agent-sessions/budget';
import { TooManyRequests } from './errors';
import { SignInLimits } from './identity/sign-in-limits';

// REDIS_CLUSTER=true against a real 3-master Redis Cluster of this file's own (redis-server on free
// ports): every script and transaction of the service runs there, which a cluster refuses with CROSSSLOT
// when the keys of one script are in different slots; queues and runs land in different slots and on
// every master; the stream hub follows runs of many shards at once. Skipped without redis-server.

const unavailable = redisClusterUnavailable();
if (unavailable) console.warn(`redis-cluster.int.test.ts skipped: ${unavailable}`);

const logger = createLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' });
const prefix = `opsi_t_cl_${randomUUID().slice(0, 8)}`;
let cluster: RedisCluster;
let command: RedisClient;
let producer: JobProducer;
const opened: RedisClient[] = [];
const workers: Worker[] = [];

function connect(role: 'command' | 'producer' | 'worker' | 'blocking') {
  const client = createRedis(cluster.url, role, true);
  opened.push(client);
  return client;
}

/** Which master (by port) serves each slot, from CLUSTER SLOTS. */
async function slotOwners(): Promise<(slot: number) => number> {
  const ranges = await (command as Cluster).cluster('SLOTS');
  return (slot) => ranges.find(([from, to]) => slot >= from && slot <= to)![2]![1];
}

/** The keys matching `pattern` on each master, by port. */
async function keysByMaster(pattern: string): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const node of masters(command)) {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, page] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      keys.push(...page);
      cursor = next;
    } while (cursor !== '0');
    out.set(node.options.port!, keys);
  }
  return out;
}

describe.skipIf(unavailable)('REDIS_CLUSTER=true on a real 3-master Redis Cluster', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    command = connect('command');
    producer = new JobProducer(connect('producer'), prefix, { tenantBacklogMax: 3 });
    await pingRedis(command);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await producer?.close();
    if (command) await deleteKeys(command, `${prefix}*`).catch(() => undefined);
    for (const client of opened) client.disconnect();
    await cluster?.stop();
  });

  it('the cluster itself refuses a script or transaction whose keys are in different slots (CROSSSLOT)', async () => {
    // The control for everything below: were the keys of one of our scripts not tagged alike, it would
    // fail just like this.
    const [a, b] = [`${prefix}:x:1`, `${prefix}:x:2`];
    expect(keySlot(a)).not.toBe(keySlot(b));
    await expect(command.eval("return redis.call('GET', KEYS[2])", 2, a, b)).rejects.toThrow(/CROSSSLOT/);
    await expect(command.multi().set(a, '1').set(b, '1').exec()).rejects.toThrow();
  });

  it("fair queuing's script, BullMQ's own scripts and workers run: a queue's keys share its slot", async () => {
    const tenant = randomUUID();
    for (const name of QUEUE_NAMES) {
      const queue = producer.queue(name);
      // The fair-queuing script's two keys: the queue's prioritized set and our hash beside it.
      expect(keySlot(fairKey(queue))).toBe(keySlot(queue.keys.prioritized!));
      expect(keySlot(queue.keys.wait!)).toBe(keySlot(queue.keys.prioritized!));
      expect(queue.keys.wait).toBe(`${prefix}:bull:{${name}}:${name}:wait`);
    }
    // Admission runs the script (and refuses past the bound), enqueue runs BullMQ's add script.
    for (let i = 0; i < 3; i++) {
      await producer.enqueue('agent', 'turn', { run_id: randomUUID(), tenant_id: tenant }, { admit: true });
    }
    await expect(producer.admit('agent', tenant)).rejects.toMatchObject({ backlog: 3, limit: 3 });
    // A worker takes them (BullMQ's move-to-active and finish scripts, its blocking marker read).
    const done: string[] = [];
    workers.push(
      createQueueWorker(
        'agent',
        { turn: async (payload) => void done.push(payload.run_id) },
        {
          connection: connect('worker'),
          redisPrefix: prefix,
          concurrency: 2,
          lockDuration: 5000,
          stalledInterval: 5000,
          maxStalledCount: 1,
          logger,
        },
      ),
    );
    await until('the worker ran the three turns', () => (done.length === 3 ? true : undefined));
    expect(await producer.queue('agent').getJobCounts('prioritized', 'completed')).toEqual({
      prioritized: 0,
      completed: 3,
    });
    // The workers count (CLIENT LIST on every node).
    expect(await producer.workerCount('agent')).toBeGreaterThanOrEqual(1);
  });

  it('run stream appends (a script), timeline appends (MULTI), sign-in limits (3 keys) and budgets run', async () => {
    const log = new RunEventLog(command, prefix, 600);
    const runId = randomUUID();
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'run.completed', { reply: 'ok' });
    expect((await log.read(runId, 0)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await command.ttl(log.streamKey(runId))).toBeGreaterThan(0);

    const timeline = new TimelineLog(command, prefix);
    const incidentId = randomUUID();
    await timeline.append({
      id: 7,
      incident_id: incidentId,
      kind: 'note',
      body: 'x',
      actor: 'a',
      created_at: new Date().toISOString(),
    });
    // append swallows its errors (Postgres is the truth): the entry being there shows the MULTI ran.
    expect((await timeline.read(incidentId, 0)).map((e) => e.seq)).toEqual([7]);
    expect(await command.ttl(timeline.streamKey(incidentId))).toBeGreaterThan(0);

    const limits = new SignInLimits(command, prefix, {
      LOGIN_MAX_FAILURES_PER_ACCOUNT: 2,
      LOGIN_MAX_FAILURES_PER_ADDRESS: 100,
      LOGIN_WINDOW_SECONDS: 60,
    });
    for (let i = 0; i < 2; i++) {
      await limits.attempt('who@example.com', '10.0.0.1');
      await limits.failed('who@example.com', '10.0.0.1');
    }
    await expect(limits.check('who@example.com', '10.0.0.1')).rejects.toBeInstanceOf(TooManyRequests);
    await expect(limits.attempt('who@example.com', '10.0.0.1')).rejects.toBeInstanceOf(TooManyRequests);
    await limits.check('other@example.com', '10.0.0.1');
    // Attempts in flight count, and end with the answer.
    await limits.attempt('other@example.com', '10.0.0.1');
    await limits.attempt('other@example.com', '10.0.0.1');
    await expect(limits.attempt('other@example.com', '10.0.0.1')).rejects.toBeInstanceOf(TooManyRequests);
    await limits.abandoned('other@example.com', '10.0.0.1');
    await limits.succeeded('other@example.com', '10.0.0.1');
    await limits.attempt('other@example.com', '10.0.0.1');

    const budget = new AgentBudget(command, prefix);
    const token = randomUUID();
    expect(await budget.spend(token, 2)).toEqual({ ok: true, used: 1 });
    expect(await budget.spend(token, 2)).toEqual({ ok: true, used: 2 });
    expect((await budget.spend(token, 2)).ok).toBe(false);
    await budget.refund(token);
    expect(await budget.used(token)).toBe(1);
  });

  it("different runs' streams and different queues land in different slots, on every master", async () => {
    const owner = await slotOwners();
    const log = new RunEventLog(command, prefix, 600);
    const runs = Array.from({ length: 64 }, () => randomUUID());
    for (const runId of runs) await log.append(runId, 'run.started', { attempt: 1 });
    const slots = new Set(runs.map((r) => keySlot(log.streamKey(r))));
    expect(slots.size).toBeGreaterThan(STREAM_SHARDS / 2);
    // Where the streams really are: some on each of the three masters.
    const streams = await keysByMaster(`${prefix}:run:*:events`);
    expect(streams.size).toBe(3);
    for (const [port, keys] of streams) {
      expect(keys.length, `run streams on master ${port}`).toBeGreaterThan(0);
      for (const key of keys) expect(owner(keySlot(key))).toBe(port);
    }
    expect([...streams.values()].flat().filter((k) => runs.some((r) => k.includes(r)))).toHaveLength(64);

    // Each queue in its own slot; together on more than one master.
    const queueSlots = QUEUE_NAMES.map((q) => keySlot(producer.queue(q).keys.wait!));
    expect(new Set(queueSlots).size).toBe(QUEUE_NAMES.length);
    expect(new Set(queueSlots.map(owner)).size).toBeGreaterThan(1);
    for (const name of QUEUE_NAMES) await producer.queue(name).add('probe', {}, { delay: 3_600_000 });
    const queueKeys = await keysByMaster(`${prefix}:bull:*`);
    const mastersWithQueues = [...queueKeys.values()].filter((keys) => keys.length > 0);
    expect(mastersWithQueues.length).toBeGreaterThan(1);
    // Nothing of one queue sits on a master that does not own that queue's slot.
    for (const [port, keys] of queueKeys) {
      for (const key of keys) expect(owner(keySlot(key))).toBe(port);
    }
  });

  it('the stream hub follows runs of every shard at once, each run whole and in order', async () => {
    const log = new RunEventLog(command, prefix, 600);
    const hub = new RunStreamHub(log, connect('blocking'), command, prefix, logger);
    try {
      const runs = Array.from({ length: 24 }, () => randomUUID());
      const keys = runs.map((r) => log.streamKey(r));
      // One XREAD over them all is what a cluster refuses: the hub must split it by tag.
      await expect(
        command.xread('STREAMS', keys[0]!, ...keys.slice(1), ...runs.map(() => '0-0')),
      ).rejects.toThrow(/CROSSSLOT/);
      expect(new Set(keys.map(keySlot)).size).toBeGreaterThan(4);
      const seen = new Map<string, number[]>(runs.map((r) => [r, []]));
      const ended: Array<Promise<void>> = [];
      for (const runId of runs) {
        let end!: () => void;
        ended.push(new Promise<void>((resolve) => (end = resolve)));
        await hub.subscribe(runId, 0, {
          onEvents: (events: RunEvent[]) => void seen.get(runId)!.push(...events.map((e) => e.seq)),
          onEnd: () => end(),
          fresh: true,
        });
      }
      // Live events after every subscriber has joined its shard's read.
      for (const runId of runs) await log.append(runId, 'run.started', { attempt: 1 });
      for (const runId of runs) await log.append(runId, 'message.delta', { text: 'a' });
      for (const runId of runs) {
        await log.append(runId, 'run.completed', { reply: 'a' });
      }
      await Promise.all(ended);
      for (const runId of runs) expect(seen.get(runId)).toEqual([1, 2, 3]);
      expect(hub.size).toBe(0);
    } finally {
      await hub.stop();
    }
  });
  it('a slot moved to another master (resharding) is followed: the hub and a queue carry on', async () => {
    const log = new RunEventLog(command, prefix, 600);
    const hub = new RunStreamHub(log, connect('blocking'), command, prefix, logger);
    try {
      const runId = randomUUID();
      const seen: number[] = [];
      let end!: () => void;
      const ended = new Promise<void>((resolve) => (end = resolve));
      await hub.subscribe(runId, 0, {
        onEvents: (events: RunEvent[]) => void seen.push(...events.map((e) => e.seq)),
        onEnd: () => end(),
        fresh: true,
      });
      await log.append(runId, 'run.started', { attempt: 1 });
      await until('the first event', () => (seen.length === 1 ? true : undefined));
      // The run's stream (and the hub's wake-up stream of its shard) move while the hub reads them.
      const slot = keySlot(log.streamKey(runId));
      const owner = await slotOwners();
      const elsewhere = cluster.urls.find((u) => Number(new URL(u).port) !== owner(slot))!;
      await moveSlot(cluster, slot, elsewhere);
      expect((await slotOwners())(slot)).toBe(Number(new URL(elsewhere).port));
      await log.append(runId, 'message.delta', { text: 'a' });
      await log.append(runId, 'run.completed', { reply: 'a' });
      await ended;
      expect(seen).toEqual([1, 2, 3]);

      // The agent queue's slot moves too: a job enqueued after it is taken by the running worker.
      const agentSlot = keySlot(producer.queue('agent').keys.wait!);
      const queueOwner = (await slotOwners())(agentSlot);
      const target = cluster.urls.find((u) => Number(new URL(u).port) !== queueOwner)!;
      await moveSlot(cluster, agentSlot, target);
      const before = await producer.queue('agent').getJobCounts('completed');
      await producer.enqueue('agent', 'turn', { run_id: randomUUID(), tenant_id: randomUUID() });
      await until('the worker took the job after the move', async () =>
        (await producer.queue('agent').getJobCounts('completed')).completed === before.completed! + 1
          ? true
          : undefined,
      );
    } finally {
      await hub.stop();
    }
  });
});
