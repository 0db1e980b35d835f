import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '@opsi/contracts';
import { createRedis, deleteKeys } from '@opsi/redis';
import { testRedisCluster, testRedisUrl } from '@opsi/test-support';
import { RunStreamHub } from './run-hub';
import { RunEventLog } from './run-log';

const prefix = `opsi_t_hub_${randomUUID().slice(0, 8)}`;
const command = createRedis(testRedisUrl(), 'command', testRedisCluster());
const blocking = createRedis(testRedisUrl(), 'worker', testRedisCluster());
const log = new RunEventLog(command, prefix, 600);
const hub = new RunStreamHub(log, blocking, command, prefix);

afterAll(async () => {
  await hub.stop();
  await deleteKeys(command, `${prefix}*`);
  command.disconnect();
  blocking.disconnect();
});

/** Subscribes and collects: the seqs delivered, and a promise of the end. */
async function collect(runId: string, afterSeq: number, fresh?: boolean) {
  const seqs: number[] = [];
  let ended!: () => void;
  const end = new Promise<void>((resolve) => (ended = resolve));
  const subscription = await hub.subscribe(runId, afterSeq, {
    onEvents: (events: RunEvent[]) => void seqs.push(...events.map((e) => e.seq)),
    onEnd: () => ended(),
    ...(fresh ? { fresh } : {}),
  });
  return { seqs, end, subscription };
}

describe('RunStreamHub.subscribe', () => {
  it('fresh: a run started just now joins the live read at once, and gets what came before and after, once each', async () => {
    const runId = randomUUID();
    // The worker was faster than the subscription: two events are there already.
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'message.delta', { text: 'a' });
    const s = await collect(runId, 0, true);
    await log.append(runId, 'message.completed', { text: 'a' });
    await log.append(runId, 'run.completed', { reply: 'a' });
    await s.end;
    expect(s.seqs).toEqual([1, 2, 3, 4]);
    expect(hub.size).toBe(0);
  });

  it('fresh: a stream with nothing yet delivers from its first event', async () => {
    const runId = randomUUID();
    const s = await collect(runId, 0, true);
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'run.failed', { detail: 'no' });
    await s.end;
    expect(s.seqs).toEqual([1, 2]);
  });

  it('attach at the terminal event of a finished run ends at once, with nothing delivered', async () => {
    const runId = randomUUID();
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'run.completed', { reply: 'done' });
    const s = await collect(runId, 2);
    await s.end;
    expect(s.seqs).toEqual([]);
    expect(hub.size).toBe(0);
  });

  it('attach in the middle replays what is stored, then continues live to the end', async () => {
    const runId = randomUUID();
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'message.delta', { text: 'a' });
    await log.append(runId, 'message.delta', { text: 'b' });
    const s = await collect(runId, 1);
    expect(s.seqs).toEqual([2, 3]);
    await log.append(runId, 'run.completed', { reply: 'ab' });
    await s.end;
    expect(s.seqs).toEqual([2, 3, 4]);
  });

  it('attach at 0 to a run with nothing yet waits for its first event', async () => {
    const runId = randomUUID();
    const s = await collect(runId, 0);
    expect(hub.size).toBeGreaterThan(0);
    await log.append(runId, 'run.started', { attempt: 1 });
    await log.append(runId, 'run.completed', { reply: '' });
    await s.end;
    expect(s.seqs).toEqual([1, 2]);
  });
});
