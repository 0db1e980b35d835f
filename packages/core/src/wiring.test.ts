import { describe, expect, it } from 'vitest';
import type { Db } from '@opsi/db';
import type { JobProducer } from '@opsi/jobs';
import { domainBus } from './events';
import './wiring';

/** A producer that records what it was asked to enqueue (the scan's follow-up jobs). */
function recorder() {
  const jobs: string[] = [];
  const producer = {
    enqueue: async (queue: string, name: string, _payload: unknown, opts: { jobId?: string }) => {
      jobs.push(`${queue}.${name} ${opts.jobId}`);
      return { id: opts.jobId };
    },
  } as unknown as JobProducer;
  return { jobs, producer };
}

describe("the domains' wiring: a scan's end", () => {
  it('a failed scan starts its resilience run (by the scan id) and neither notifications nor triage', async () => {
    const failed = recorder();
    await domainBus.emit('scan.ended', {
      db: {} as Db,
      producer: failed.producer,
      delivery: { attempts: 1, backoffMs: 1, timeoutMs: 1 },
      tenantId: 't1',
      scanId: 's1',
      status: 'failed',
    });
    expect(failed.jobs).toEqual(['pulse.resilience resilience-s1']);
  });
});
