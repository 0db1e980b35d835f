import type { Db } from '@opsi/db';
import type { JobProducer, TimelineLog } from '@opsi/jobs';

/** How notifications are delivered: tries, backoff and timeout (the worker's settings). */
export interface DeliveryPolicy {
  /** Tries per delivery, the first included. */
  attempts: number;
  /** First backoff delay; it doubles each retry. */
  backoffMs: number;
  /** Per-request timeout. */
  timeoutMs: number;
}

/**
 * The in-process bus between domains: a domain publishes what happened, and the domains that react to it
 * subscribe here, so neither imports the other (a run's end writes an incident's timeline without the run
 * engine importing incidents' timeline code; a scan's end starts resilience, notifications and triage).
 *
 * Glossary
 * - event: a fact a domain publishes after it happened. Handlers run in registration order and are
 *   awaited; a handler's failure is the publisher's failure, so a job's retry runs the handlers again:
 *   every handler must be idempotent (the timeline writes once per (run, kind), for example).
 * - query: a question one domain answers for another (`ask`), with exactly one answerer.
 * - wiring: `wiring.ts` subscribes the domains' handlers once, when @opsi/core is loaded.
 *
 * Events carry the database (and the live timeline when the publisher has one) so a handler writes in
 * the same process, with the same connections, as the work that published it.
 */
export interface DomainEvents {
  /** An agent run began its turn (or resumed it after a crash). */
  'agent_run.started': AgentRunFact;
  /** An agent run ended: its terminal event is on its stream and its row is closed. */
  'agent_run.ended': AgentRunFact & { outcome: 'completed' | 'failed'; text: string };
  /**
   * A scan's job ran it to its end (completed, partial or failed; a retry of the job publishes again):
   * the graph starts its resilience run, notifications tell of the critical findings it opened, triage
   * takes the alert events it brought in. Follow-up jobs are enqueued with ids of the scan, so a second
   * publication adds nothing.
   */
  'scan.ended': {
    db: Db;
    producer: JobProducer;
    delivery: DeliveryPolicy;
    tenantId: string;
    scanId: string;
    status: string;
  };
}

export interface AgentRunFact {
  db: Db;
  timeline?: TimelineLog | undefined;
  tenantId: string;
  runId: string;
  sessionId: string;
  /** A conversation turn (null), or what else the run is for (investigation). */
  purpose: string | null;
  /** The incident the run investigates, else null. */
  incidentId: string | null;
}

export interface DomainQueries {
  /** What a turn bound to an incident sees: the record, its alerts and its latest timeline events. */
  'incident.turn_context': {
    args: { db: Db; tenantId: string; incidentId: string };
    answer: Record<string, unknown> | undefined;
  };
}

type Handler<T> = (payload: T) => Promise<void> | void;

export class DomainBus {
  private readonly handlers = new Map<keyof DomainEvents, Array<Handler<never>>>();
  private readonly answerers = new Map<keyof DomainQueries, (args: never) => Promise<unknown>>();

  on<K extends keyof DomainEvents>(name: K, handler: Handler<DomainEvents[K]>): () => void {
    const list = this.handlers.get(name) ?? [];
    list.push(handler as Handler<never>);
    this.handlers.set(name, list);
    return () => {
      const at = list.indexOf(handler as Handler<never>);
      if (at >= 0) list.splice(at, 1);
    };
  }

  /** Runs every handler of the event, in order, awaited; the first failure is thrown. */
  async emit<K extends keyof DomainEvents>(name: K, payload: DomainEvents[K]): Promise<void> {
    for (const handler of this.handlers.get(name) ?? []) await (handler as Handler<DomainEvents[K]>)(payload);
  }

  answer<K extends keyof DomainQueries>(
    name: K,
    answerer: (args: DomainQueries[K]['args']) => Promise<DomainQueries[K]['answer']>,
  ): void {
    if (this.answerers.has(name)) throw new Error(`${name} already has an answerer`);
    this.answerers.set(name, answerer as (args: never) => Promise<unknown>);
  }

  async ask<K extends keyof DomainQueries>(
    name: K,
    args: DomainQueries[K]['args'],
  ): Promise<DomainQueries[K]['answer']> {
    const answerer = this.answerers.get(name);
    if (!answerer) throw new Error(`nothing answers ${name}: is @opsi/core's wiring loaded?`);
    return (await answerer(args as never)) as DomainQueries[K]['answer'];
  }
}

/** The process's bus; `wiring.ts` subscribes the domains to it. */
export const domainBus = new DomainBus();
