import { AskBody, AskResponse, AttachQuery, Seq, StreamQuery } from '@opsi/contracts';
import { AppError, isRunOutageDetail, latestRunOfSession, startRun, storedTerminalEvent } from '@opsi/core';
import type { RunEvent } from '@opsi/contracts';
import { defineRoute } from '../http/route';
import { assertRedisUp } from '../http/errors';
import { openEventStream, sseFrame, streamRun, waitForTerminal } from '../http/sse';
import type { ApiDeps } from '../deps';

const SSE = { sse: true } as const;

function sseOptions(deps: ApiDeps, runId: string, headers: Record<string, string> = {}) {
  return {
    keepaliveMs: deps.config.SSE_KEEPALIVE_MS,
    maxBufferedBytes: deps.config.SSE_MAX_BUFFERED_BYTES,
    headers,
    lost: () => storedTerminalEvent(deps.db, runId),
  };
}

function runDeps(deps: ApiDeps) {
  return { db: deps.db, redis: deps.redis, redisPrefix: deps.config.REDIS_PREFIX, ...deps.runs };
}

export const postAsk = defineRoute({
  method: 'POST',
  path: '/api/v1/ask',
  auth: 'read_write',
  summary: 'Ask the agent; blocks until the run ends',
  description:
    'Answers {reply, session_id} when the run completes; a failed run answers 502 {detail}, or 503 {detail} when it failed because the database or Redis was unavailable through all its attempts or Redis lost its job (ask again). The run is durable: a client that hangs up does not stop it (re-attach with GET /api/v1/stream/attach). Spends one unit of the daily agent budget. Allow a read timeout of at least 660 s.',
  tags: ['agent'],
  body: AskBody,
  responses: { 200: AskResponse },
  errors: [400, 404, 415, 429, 502, 503],
  handler: async ({ ctx, deps, auth, body }) => {
    assertRedisUp(deps.redis);
    const { runId, sessionId } = await startRun(runDeps(deps), auth, {
      prompt: body.prompt,
      sessionId: body.session_id,
      selectedTools: body.selected_tools,
    });
    ctx.set('X-Run-Id', runId);
    const terminal = await waitForTerminal(ctx, deps.runs.hub, runId, () =>
      storedTerminalEvent(deps.db, runId),
    );
    if (!terminal) return undefined; // the client left; the run goes on
    // A run that ended for want of the database or Redis (an outage outlasting its retries, or Redis
    // losing its job) is the service's unavailability, not the agent's failure: 503, ask again.
    if (terminal.kind === 'run.failed' && isRunOutageDetail(terminal.detail))
      throw new AppError(503, String(terminal.detail), { 'Retry-After': '5' });
    if (terminal.kind === 'run.failed')
      throw new AppError(502, `The agent run failed: ${String(terminal.detail)}`);
    return { reply: String(terminal.reply), session_id: sessionId };
  },
});

export const getStream = defineRoute({
  method: 'GET',
  path: '/api/v1/stream',
  auth: 'read_write',
  summary: 'Ask the agent and stream the run as Server-Sent Events',
  description:
    'Events: id = seq (1, 2, 3…), event = kind, data = JSON {seq, run_id, kind, at, …}. Kinds: run.started, run.resumed, message.delta, tool.started, tool.finished, message.completed, run.completed, run.failed. Exactly one terminal event ends the stream. Headers X-Session-Id and X-Run-Id name the run. Spends one unit of the daily agent budget; refusals (400, 403, 404, 429) come before the stream opens.',
  tags: ['agent'],
  query: StreamQuery,
  responses: { 200: SSE },
  errors: [400, 404, 429, 503],
  handler: async ({ ctx, deps, auth, query }) => {
    assertRedisUp(deps.redis);
    const { runId, sessionId } = await startRun(runDeps(deps), auth, {
      prompt: query.prompt,
      sessionId: query.session_id,
      selectedTools: query.selected_tools,
    });
    await streamRun(ctx, deps.runs.hub, runId, 0, {
      ...sseOptions(deps, runId, { 'X-Session-Id': sessionId, 'X-Run-Id': runId }),
      fresh: true,
    });
  },
});

export const getAttach = defineRoute({
  method: 'GET',
  path: '/api/v1/stream/attach',
  auth: 'read_write',
  summary: "Re-attach to the session's latest run: replay after after_seq, then live",
  description:
    'Replays the stored events with seq > after_seq (or the Last-Event-ID header, which wins), then continues live until the terminal event, with no gap and no duplicate. After the terminal event of a finished run: 200 and the stream closes. Events older than RUN_STREAM_TTL_SECONDS after the run ended are gone; the terminal event is then served from Postgres. Spends no budget.',
  tags: ['agent'],
  query: AttachQuery,
  responses: { 200: SSE },
  errors: [400, 404, 503],
  handler: async ({ ctx, deps, auth, query }) => {
    const header = ctx.get('last-event-id');
    const fromHeader = header ? Seq.safeParse(header) : undefined;
    if (fromHeader && !fromHeader.success)
      throw new AppError(400, 'Last-Event-ID must be a sequence number: decimal digits only.');
    const afterSeq = fromHeader?.data ?? query.after_seq ?? 0;
    assertRedisUp(deps.redis);
    const run = await latestRunOfSession(deps.db, auth.tenant.id, query.session_id);
    const headers = { 'X-Session-Id': query.session_id, 'X-Run-Id': run.id };
    if (run.status === 'completed' || run.status === 'failed') {
      const stored = await deps.runs.log.last(run.id);
      if (!stored && run.terminal_event) {
        // The stream expired; the row keeps the terminal event.
        const terminal = run.terminal_event as unknown as RunEvent;
        const res = openEventStream(ctx, headers);
        res.end(terminal.seq > afterSeq ? sseFrame(terminal) : undefined);
        return;
      }
    }
    await streamRun(ctx, deps.runs.hub, run.id, afterSeq, sseOptions(deps, run.id, headers));
  },
});

export const agentRoutes = [postAsk, getStream, getAttach];
