import type { RedisClient } from '@opsi/redis';
import { EngineError, type AgentEngine } from '@opsi/agent';
import type { RunEvent, RunEventData, RunEventKind } from '@opsi/contracts';
import type { Db } from '@opsi/db';
import { isTerminal, type JobProducer, type RunEventLog, type TimelineLog } from '@opsi/jobs';
import type { Logger } from '@opsi/logger';
import { agentToolsFor, availableTools } from '../agent';
import { markLearningsUsed } from '../knowledge';
import { domainBus } from '../events';
import type { Auth } from '../context';
import { BadRequest, NotFound, ServiceUnavailable, TooManyRequests } from '../errors';
import type { AgentBudget } from './budget';
import {
  deleteSessionRow,
  findLatestRunOfSession,
  findOpenRunsBefore,
  findOpenRunsOfSession,
  findRun,
  findSessionElsewhere,
  findTerminalEvent,
  findTurnContext,
  insertReply,
  insertRunWithSession,
  markRunCheckpoint,
  markRunClaimed,
  markRunFinished,
  reserveRunSeqs,
  type RunRow,
} from './repository';
import { getOwnSession } from './sessions';

/** What starting and cancelling runs needs (the API side). */
export interface RunStartDeps {
  db: Db;
  redis: RedisClient;
  log: RunEventLog;
  producer: JobProducer;
  budget: AgentBudget;
  redisPrefix: string;
}

export interface StartRunInput {
  prompt: string;
  sessionId?: string | undefined;
  selectedTools?: string[] | undefined;
  /** An investigation of this incident: the run and its session are bound to it. */
  incidentId?: string | undefined;
  purpose?: 'investigation' | undefined;
  sessionName?: string | undefined;
}

const CANCELLED = 'Run cancelled: its session was deleted.';
const UUID_IN_TEXT = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/** How many of the newest active learnings go with every agent turn (the rest stay reachable by tool). */
const TURN_LEARNINGS = 50;

function cancelKey(redisPrefix: string, runId: string) {
  return `${redisPrefix}:run:${runId}:cancel`;
}

/** The pub/sub channel on which agent workers hear that a run they hold must stop. */
export function cancelChannel(redisPrefix: string) {
  return `${redisPrefix}:run-cancel`;
}

/**
 * Validates an agent turn, spends one unit of the caller's daily budget, admits it to the agent queue
 * (its fair place among the tenants' waiting turns; BacklogFull, a 503, when the tenant's backlog is at
 * its bound, which gives the unit back), records the run and its prompt, and enqueues it. Every refusal
 * (400, 404, 429, 503 for a full backlog) happens before anything is written or spent.
 */
export async function startRun(deps: RunStartDeps, auth: Auth, input: StartRunInput) {
  // A token's budget is its own; a browser session (the console) spends its user's, per user and day.
  const budgetKey = auth.kind === 'token' ? auth.token.id : `user:${auth.user.id}`;
  const tokenId = auth.kind === 'token' ? auth.token.id : null;
  if (input.selectedTools?.length) {
    const known = new Set(availableTools(auth.tenant).map((t) => t.name));
    const unknown = input.selectedTools.filter((t) => !known.has(t));
    if (unknown.length) {
      throw new BadRequest(`selected_tools names tools this tenant does not have: ${unknown.join(', ')}`);
    }
  }
  if (input.sessionId) {
    // Sessions are keyed by tenant and id (every read filters by tenant), but the contract
    // (decisions, "Agent runs and events") answers 404 for a session id another tenant holds, before
    // anything is spent.
    const elsewhere = await findSessionElsewhere(deps.db, input.sessionId, auth.tenant.id);
    if (elsewhere) throw new NotFound('No such session.');
  }
  const decision = await deps.budget.spend(budgetKey, auth.tenant.daily_agent_budget);
  if (!decision.ok) {
    throw new TooManyRequests(
      `Daily agent budget of ${auth.tenant.daily_agent_budget} runs for this ${auth.kind === 'token' ? 'token' : 'user'} is used up; it renews at 00:00 UTC.`,
      decision.retryAfterSeconds,
    );
  }
  let place: { priority: number };
  try {
    // After the budget, so a refused request (429) takes no place in the queue.
    place = await deps.producer.admit('agent', auth.tenant.id);
  } catch (e) {
    await deps.budget.refund(budgetKey).catch(() => undefined);
    throw e;
  }
  let run: { id: string; session_id: string };
  try {
    // One statement, atomic without an explicit transaction (one round trip instead of six): the
    // session (keyed by tenant and id: another tenant's session of the same id is not this one) is
    // created or touched, then the run and the prompt.
    const sessionId = input.sessionId ?? crypto.randomUUID();
    const name = input.sessionName ?? (input.prompt.replace(/\s+/g, ' ').slice(0, 60) || 'Untitled session');
    const incidentId = input.incidentId ?? null;
    run = await insertRunWithSession(deps.db, {
      sessionId,
      tenantId: auth.tenant.id,
      userId: auth.user.id,
      name,
      incidentId,
      tokenId,
      prompt: input.prompt,
      selectedTools: input.selectedTools ?? null,
      purpose: input.purpose ?? null,
    });
  } catch (e) {
    await deps.budget.refund(budgetKey).catch(() => undefined);
    throw e;
  }
  try {
    // The job id is the run id: a retried request or a double click never runs a turn twice.
    await deps.producer.enqueue(
      'agent',
      'turn',
      { run_id: run.id, tenant_id: auth.tenant.id },
      { jobId: run.id, priority: place.priority },
    );
  } catch (e) {
    await deps.budget.refund(budgetKey).catch(() => undefined);
    const terminal = await deps.log
      .append(run.id, 'run.failed', { detail: 'The run could not be queued.' })
      .catch(() => null);
    await finishRun(
      deps.db,
      run.id,
      terminal ?? {
        seq: 0,
        run_id: run.id,
        kind: 'run.failed',
        at: new Date().toISOString(),
        detail: 'The run could not be queued.',
      },
    );
    throw new ServiceUnavailable(`The agent queue is unavailable: ${(e as Error).message}`, 10);
  }
  return { runId: run.id, sessionId: run.session_id };
}

/** Records a run's terminal event in its Postgres row (once: a finished row is never changed). */
export async function finishRun(db: Db, runId: string, terminal: RunEvent): Promise<void> {
  await markRunFinished(db, runId, terminal);
}

/** The latest run of a session, for attach. */
export async function latestRunOfSession(db: Db, tenantId: string, sessionId: string) {
  await getOwnSession(db, tenantId, sessionId);
  const run = await findLatestRunOfSession(db, tenantId, sessionId);
  if (!run) throw new NotFound('This session has no run yet.');
  return run;
}

/**
 * Asks every worker to stop a run: a durable flag (checked when a job starts) and a broadcast (heard by
 * the worker that holds it). A run still waiting in the queue is removed and closed here.
 */
export async function cancelRun(
  deps: Pick<RunStartDeps, 'redis' | 'log' | 'producer' | 'redisPrefix' | 'db'>,
  runId: string,
) {
  await deps.redis.set(cancelKey(deps.redisPrefix, runId), '1', 'EX', 3600);
  await deps.redis.publish(cancelChannel(deps.redisPrefix), runId);
  const removed = await deps.producer
    .queue('agent')
    .remove(runId)
    .catch(() => 0);
  if (removed === 1) {
    const terminal = await deps.log.append(runId, 'run.failed', { detail: CANCELLED });
    if (terminal) await finishRun(deps.db, runId, terminal);
  }
}

/** Deletes a session and its messages and runs; a run still going is cancelled first. */
export async function deleteSession(
  deps: Pick<RunStartDeps, 'redis' | 'log' | 'producer' | 'redisPrefix' | 'db'>,
  tenantId: string,
  sessionId: string,
) {
  await getOwnSession(deps.db, tenantId, sessionId);
  const open = await findOpenRunsOfSession(deps.db, tenantId, sessionId);
  for (const run of open) await cancelRun(deps, run.id);
  await deleteSessionRow(deps.db, tenantId, sessionId);
}

/** How many seqs a worker reserves in Postgres at a time: one row update per this many events. */
const SEQ_BLOCK = 100;

/**
 * Numbers a run's events for one execution so that numbering never goes back, even when Redis loses the
 * run's stream (a restart without persistence) once or many times while the run goes on, or between
 * its attempts. It tracks the highest seq handed out (`known`, always the floor) and, before any seq
 * beyond the block reserved in Postgres is handed out, reserves the next block there
 * (agent_runs.seq_reserved). A stream found gone continues above the reservation of earlier attempts
 * and above `known`: above every seq any client may have seen.
 */
export class RunSequence {
  /** The highest seq handed out for this run that this execution knows of. */
  known: number;
  /** Every seq up to this one is reserved in Postgres. */
  reserved: number;
  /** Reserved by earlier attempts: every seq they handed out is at or below it. */
  private readonly priorReserved: number;

  constructor(
    private readonly db: Db,
    private readonly log: RunEventLog,
    private readonly runId: string,
    start: { lastSeq: number; reserved: number },
  ) {
    this.known = start.lastSeq;
    this.reserved = start.reserved;
    this.priorReserved = Math.max(start.reserved, start.lastSeq);
  }

  /** Appends an event (null when the run already ended), reserving seqs first when needed. */
  async append<K extends RunEventKind>(kind: K, data: RunEventData<K>): Promise<RunEvent | null> {
    const missingFloor = Math.max(this.priorReserved, this.known);
    if (missingFloor + 1 > this.reserved) await this.reserve(missingFloor + SEQ_BLOCK);
    const event = await this.log.append(this.runId, kind, data, this.known, missingFloor);
    if (event) {
      this.known = Math.max(this.known, event.seq);
      // Another writer numbered past the reservation (a duplicate attempt): keep the bound true.
      if (event.seq > this.reserved) await this.reserve(event.seq + SEQ_BLOCK);
    }
    return event;
  }

  private async reserve(upTo: number) {
    await reserveRunSeqs(this.db, this.runId, upTo);
    this.reserved = upTo;
  }
}

/** The terminal event Postgres keeps for a run, if it ended (for a stream Redis lost). */
export async function storedTerminalEvent(db: Db, runId: string): Promise<RunEvent | undefined> {
  const row = await findTerminalEvent(db, runId);
  return (row?.terminal_event ?? undefined) as RunEvent | undefined;
}

/**
 * Marks a queued or running run running (this attempt) and reserves its first block of seqs, above
 * every seq handed out so far (`knownSeq`: the stream's last), in one statement that also answers the
 * row as it was before (status, last_seq, seq_reserved: whether this is a resumption, and the
 * numbering's floors) and the reservation made. Undefined when the row is gone or the run ended.
 */
export async function claimRun(
  db: Db,
  runId: string,
  attempt: number,
  knownSeq: number,
): Promise<(RunRow & { reserved_to: number }) | undefined> {
  return markRunClaimed(db, runId, attempt, knownSeq, SEQ_BLOCK);
}

/** What executing a run needs (the worker side). */
export interface RunExecuteDeps {
  db: Db;
  redis: RedisClient;
  log: RunEventLog;
  engine: AgentEngine;
  redisPrefix: string;
  turnTimeoutMs: number;
  /** The live side of incident timelines, for investigations' events. */
  timeline?: TimelineLog | undefined;
}

/**
 * Runs one agent turn. Idempotent: a run that already ended is left as it is; a run that was started
 * before (its worker died, or an infrastructure error retried it) continues the same sequence with
 * run.resumed and plays the turn again. Model and tool failures, cancellation and the deadline end the
 * run with run.failed; other errors are thrown so the queue retries.
 */
export async function executeRun(
  deps: RunExecuteDeps,
  runId: string,
  ctx: { attempt: number; signal: AbortSignal; log: Logger },
) {
  // The cancel flag and the stream's last event first (one round trip: one connection, written together).
  // Then, in the common case (neither a terminal event nor a cancel), one statement that reads the run
  // and marks it running, reserving its first block of seqs: a read and an update in one round trip,
  // on the way to the first event (under load every round trip waits its turn for a core).
  const [last, cancelled] = await Promise.all([
    deps.log.last(runId),
    deps.redis.exists(cancelKey(deps.redisPrefix, runId)),
  ]);
  const claimed =
    !cancelled && !(last && isTerminal(last))
      ? await claimRun(deps.db, runId, ctx.attempt, last?.seq ?? 0)
      : undefined;
  // Otherwise (or when the row is gone or ended) the row as it is, to decide what to do.
  const run = claimed ?? (await findRun(deps.db, runId));
  if (!run) return { outcome: 'gone' as const };
  if (last && isTerminal(last)) {
    await finishRun(deps.db, runId, last); // the worker died between the stream and the row
    // ... or between the row and what the run's end sets off (the handlers write once).
    await domainBus.emit('agent_run.ended', endedFact(deps, run, runId, last));
    return { outcome: 'already-ended' as const };
  }
  if (run.status === 'completed' || run.status === 'failed') return { outcome: 'already-ended' as const };

  const seq = new RunSequence(deps.db, deps.log, runId, {
    lastSeq: Math.max(run.last_seq, last?.seq ?? 0),
    reserved: run.seq_reserved,
  });
  const investigation = run.purpose === 'investigation' && run.incident_id ? run.incident_id : undefined;
  const fact = {
    db: deps.db,
    timeline: deps.timeline,
    tenantId: run.tenant_id,
    runId,
    sessionId: run.session_id,
    purpose: run.purpose,
    incidentId: run.incident_id,
  };
  const end = async (kind: 'run.completed' | 'run.failed', data: { reply: string } | { detail: string }) => {
    const terminal = await seq.append(kind, data as never);
    if (terminal) await finishRun(deps.db, runId, terminal);
    // After the run's own terminal event (a retry after a crash here publishes it then).
    await domainBus.emit('agent_run.ended', {
      ...fact,
      outcome: kind === 'run.completed' ? 'completed' : 'failed',
      text: 'reply' in data ? data.reply : data.detail,
    });
    return terminal;
  };

  if (cancelled) {
    await end('run.failed', { detail: CANCELLED });
    return { outcome: 'cancelled' as const };
  }
  // Not cancelled, not ended: claimRun marked it running (the cancel and the terminal event are the
  // only cases it is not asked, and a row gone or ended returned above).
  if (!claimed) throw new Error(`run ${runId}: neither claimed nor ended`);
  seq.reserved = claimed.reserved_to;
  // A run started before whose stream Redis lost is resumed too, after the highest seq known anywhere.
  const resumed = last !== undefined || run.status === 'running';
  await (resumed
    ? seq.append('run.resumed', { attempt: ctx.attempt, after_seq: seq.known })
    : seq.append('run.started', { attempt: ctx.attempt }));
  await domainBus.emit('agent_run.started', fact);
  // Postgres keeps a checkpoint of the last seq (tool results and the final message; the end sets it).
  const checkpoint = (n: number) => markRunCheckpoint(deps.db, runId, n);

  // A turn bound to an incident (an investigation, or a war room's session) sees it.
  const boundIncident = run.incident_id ?? run.session_incident_id ?? null;
  const [{ history, learnings }, incidentContext] = await Promise.all([
    findTurnContext(deps.db, run.tenant_id, run.session_id, runId, run.created_at, TURN_LEARNINGS),
    boundIncident
      ? domainBus.ask('incident.turn_context', {
          db: deps.db,
          tenantId: run.tenant_id,
          incidentId: boundIncident,
        })
      : undefined,
  ]);

  const deadline = AbortSignal.timeout(deps.turnTimeoutMs);
  const signal = AbortSignal.any([ctx.signal, deadline]);
  try {
    const { reply } = await deps.engine.runTurn(
      {
        tenantId: run.tenant_id,
        sessionId: run.session_id,
        runId,
        prompt: run.prompt,
        history,
        selectedTools: run.selected_tools ?? undefined,
        tools: agentToolsFor(deps.db, run.tenant_id).filter(
          (t) => !run.selected_tools?.length || run.selected_tools.includes(t.name),
        ),
        signal,
        learnings,
        incident:
          boundIncident && incidentContext
            ? { id: boundIncident, context: incidentContext, investigation: Boolean(investigation) }
            : undefined,
      },
      async ({ kind, ...data }) => {
        const appended = await seq.append(kind, data as never);
        if (!appended) throw new EngineError('The run already ended.');
        if (kind === 'tool.finished') await checkpoint(appended.seq);
      },
    );
    const completed = await seq.append('message.completed', { text: reply });
    // The checkpoint of message.completed and the reply, in one statement (one round trip, not two).
    await insertReply(deps.db, {
      tenantId: run.tenant_id,
      sessionId: run.session_id,
      runId,
      seq: completed?.seq ?? 0,
      reply,
    }).catch((e: Error) => {
      // The session was deleted while the turn ran (its runs went with it): the reply has nowhere to go.
      if (!/foreign key/i.test(e.message)) throw e;
    });
    // Learnings the answer cites (by id) were used: their use count and last use say which ones matter.
    await markLearningsUsed(deps.db, run.tenant_id, reply.match(UUID_IN_TEXT) ?? []);
    await end('run.completed', { reply });
    return { outcome: 'completed' as const };
  } catch (e) {
    let detail: string | undefined;
    if (ctx.signal.aborted) detail = CANCELLED;
    else if (deadline.aborted)
      detail = `The run exceeded its deadline of ${Math.round(deps.turnTimeoutMs / 1000)} s.`;
    else if (e instanceof EngineError) detail = e.message;
    if (detail === undefined) throw e;
    ctx.log.info({ run_id: runId, detail }, 'run failed');
    await end('run.failed', { detail });
    return { outcome: 'failed' as const };
  }
}

/** run.failed detail of a run whose job Redis lost (a restart without persistence). */
export const RUN_LOST = 'The run was lost: its job is gone.';
/**
 * run.failed detail of a run whose every attempt failed because the database or Redis was unreachable
 * (an outage longer than its retries). Like RUN_LOST it says nothing about the question: asking again
 * once the service is back may well succeed, so POST /api/v1/ask answers such a run with 503.
 */
export const RUN_FAILED_UNAVAILABLE =
  'The run failed: the database or Redis was unavailable through all its attempts; ask again shortly.';
/** The run ended for want of the service's own dependencies, not because of the turn: retry. */
export const isRunOutageDetail = (detail: unknown) =>
  detail === RUN_LOST || detail === RUN_FAILED_UNAVAILABLE;

// A job's failed reason (an error message only) that says the database or Redis was unreachable: the
// socket errors of either client, node-postgres's and ioredis's own outage messages, and Postgres
// shutting down or starting up. Never shown to clients: it names hosts and ports.
const OUTAGE_REASON =
  /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)\b|^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Connection is closed|Stream isn't writeable|Reached the max retries per request|Command timed out|LOADING )|terminating connection due to administrator command|the database system is (starting up|shutting down|in recovery mode)/;

export type JobState =
  | 'missing'
  | 'waiting'
  | 'active'
  | 'delayed'
  | 'prioritized'
  | 'waiting-children'
  | 'completed'
  | 'failed'
  | 'unknown';

/**
 * The sweeper's pass: closes runs whose job is gone (removed, failed for good, or lost with Redis) with
 * run.failed, and copies a terminal event that reached the stream but not the row. Safe to run
 * anywhere and concurrently: appends after a terminal event are refused, and finished rows never change.
 */
export async function sweepRuns(
  deps: { db: Db; log: RunEventLog; timeline?: TimelineLog | undefined },
  jobOf: (runId: string) => Promise<{ state: JobState; failedReason?: string | undefined }>,
  opts: { olderThanMs: number; limit?: number },
) {
  const open = await findOpenRunsBefore(deps.db, new Date(Date.now() - opts.olderThanMs), opts.limit ?? 500);
  let closed = 0;
  // A run the sweeper closes still publishes its end (an investigation's timeline hears how it ended).
  const tellIncident = async (run: (typeof open)[number], terminal: RunEvent | null | undefined) => {
    if (terminal) await domainBus.emit('agent_run.ended', endedFact(deps, run, run.id, terminal));
  };
  for (const run of open) {
    const last = await deps.log.last(run.id);
    if (last && isTerminal(last)) {
      await finishRun(deps.db, run.id, last);
      await tellIncident(run, last);
      closed++;
      continue;
    }
    const job = await jobOf(run.id);
    if (job.state === 'missing' || job.state === 'failed' || job.state === 'completed') {
      const detail =
        job.state !== 'failed'
          ? RUN_LOST
          : job.failedReason && OUTAGE_REASON.test(job.failedReason)
            ? RUN_FAILED_UNAVAILABLE
            : `The run failed: ${job.failedReason ?? 'its job failed'}.`;
      const terminal = await deps.log.append(
        run.id,
        'run.failed',
        { detail },
        run.last_seq,
        Math.max(run.last_seq, run.seq_reserved),
      );
      if (terminal) await finishRun(deps.db, run.id, terminal);
      await tellIncident(run, terminal);
      closed++;
    }
  }
  return { checked: open.length, closed };
}

export { cancelKey, CANCELLED };

/** The end of a run as the bus publishes it, from its terminal event. */
function endedFact(
  deps: { db: Db; timeline?: TimelineLog | undefined },
  run: { tenant_id: string; session_id: string; purpose: string | null; incident_id: string | null },
  runId: string,
  terminal: RunEvent,
) {
  const completed = terminal.kind === 'run.completed';
  return {
    db: deps.db,
    timeline: deps.timeline,
    tenantId: run.tenant_id,
    runId,
    sessionId: run.session_id,
    purpose: run.purpose,
    incidentId: run.incident_id,
    outcome: completed ? ('completed' as const) : ('failed' as const),
    text: completed ? String(terminal.reply) : String(terminal.detail),
  };
}
