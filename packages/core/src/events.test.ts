import { describe, expect, it } from 'vitest';
import type { Db } from '@opsi/db';
import { DomainBus, type AgentRunFact } from './events';

const fact = (runId: string): AgentRunFact => ({
  db: {} as Db,
  tenantId: 't',
  runId,
  sessionId: 's',
  purpose: 'investigation',
  incidentId: 'i',
});

describe('the domain bus', () => {
  it('runs every handler of an event in registration order, each awaited before the next', async () => {
    const bus = new DomainBus();
    const seen: string[] = [];
    bus.on('agent_run.started', async (r) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(`first ${r.runId}`);
    });
    bus.on('agent_run.started', (r) => {
      seen.push(`second ${r.runId}`);
    });
    await bus.emit('agent_run.started', fact('r1'));
    expect(seen).toEqual(['first r1', 'second r1']);
  });

  it("a handler's failure is the publisher's: the rest do not run and emit rejects (the job retries)", async () => {
    const bus = new DomainBus();
    const seen: string[] = [];
    bus.on('agent_run.ended', () => {
      throw new Error('timeline down');
    });
    bus.on('agent_run.ended', () => {
      seen.push('later');
    });
    await expect(
      bus.emit('agent_run.ended', { ...fact('r2'), outcome: 'completed', text: 'done' }),
    ).rejects.toThrow('timeline down');
    expect(seen).toEqual([]);
  });

  it('an unsubscribed handler no longer runs; a query has one answerer and says when it has none', async () => {
    const bus = new DomainBus();
    let n = 0;
    const off = bus.on('agent_run.started', () => {
      n++;
    });
    off();
    await bus.emit('agent_run.started', fact('r3'));
    expect(n).toBe(0);
    const args = { db: {} as Db, tenantId: 't', incidentId: 'i' };
    await expect(bus.ask('incident.turn_context', args)).rejects.toThrow(/nothing answers/);
    bus.answer('incident.turn_context', async ({ incidentId }) => ({ id: incidentId }));
    expect(await bus.ask('incident.turn_context', args)).toEqual({ id: 'i' });
    expect(() => bus.answer('incident.turn_context', async () => undefined)).toThrow(/already/);
  });
});
