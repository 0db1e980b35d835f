import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openaiError,
  openaiText,
  openaiToolCall,
  startScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@opsi/agent/testing';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import {
  call,
  createTenantWithUser,
  createTestContext,
  mintTestToken,
  readSse,
  startTestApi,
  startTestWorker,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';

/**
 * The hosted-model path end to end: the API takes the question, the worker runs the real loop against a
 * local server speaking the OpenAI chat-completions protocol, the tools read the tenant's demo data, and
 * the run's events and stored messages come out as a client sees them.
 */

const KEY = 'sk-worker-test-key-5f2c9a';

let t: TestContext;
let api: Awaited<ReturnType<typeof startTestApi>>;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let model: ScriptedModelServer;
let a: TestMember;
let token: string;
let mode: 'answer' | 'limited' | 'broken' | 'slow' = 'answer';

interface ToolFinding {
  id: string;
  title: string;
  monthly_savings: number;
}

/** The scripted model: asks for the findings, then answers from what the tool returned. */
function reply(req: RecordedRequest): ScriptedReply {
  if (mode === 'limited') return openaiError(429, `Rate limit reached for local-model (key ${KEY})`);
  if (mode === 'broken') {
    return {
      events: [
        openaiText('The biggest').events[1]!,
        { data: '{"id":"chatcmpl-local","choices":[{"index":0,"delta":{"content":" sav' },
      ],
    };
  }
  if (mode === 'slow') {
    // About 30 s of text, a piece every 300 ms: long enough to be cancelled in the middle.
    return { events: openaiText(...Array.from({ length: 100 }, () => 'working ')).events, delayMs: 300 };
  }
  const messages = req.body.messages as Array<{ role: string; content: string }>;
  const result = messages.find((m) => m.role === 'tool');
  if (!result) return openaiToolCall('list_findings', { domain: 'finops', sort_by: 'savings', limit: 3 });
  const output = JSON.parse(result.content) as { total: number; findings: ToolFinding[] };
  const top = output.findings[0]!;
  return openaiText(
    `There are ${output.total} active finops findings. `,
    `The biggest saving is finding ${top.id} `,
    `(${top.title}): $${top.monthly_savings.toFixed(2)} a month.`,
  );
}

beforeAll(async () => {
  t = await createTestContext();
  model = await startScriptedModelServer((req) => reply(req));
  api = await startTestApi(t);
  worker = await startTestWorker(t, {
    WORKER_QUEUES: ['agent'],
    AGENT_ENGINE: 'openai',
    AGENT_BASE_URL: `${model.url}/v1`,
    AGENT_MODEL: 'local-model',
    AGENT_API_KEY: KEY,
    AGENT_MAX_RETRIES: 0,
  });
  a = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await runScan(t.db, (await requestScan(t.db, null, a.tenant.id, 'test')).id);
  token = (await mintTestToken(t, a, 'read_write')).token;
}, 120_000);
afterAll(async () => {
  await worker?.close();
  await api?.close();
  await model?.close();
  await t?.close();
});

const attach = (sessionId: string) =>
  readSse(
    `${api.url}/api/v1/stream/attach?${new URLSearchParams({ session_id: sessionId, after_seq: '0' })}`,
    {
      token,
    },
  );

async function storedMessages(sessionId: string) {
  return t.db
    .selectFrom('agent_messages')
    .select(['role', 'content', 'run_id'])
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .execute();
}

describe('a hosted model (OpenAI protocol) through the worker', () => {
  it('calls list_findings on the tenant data, streams a grounded answer and stores it', async () => {
    mode = 'answer';
    const before = model.requests.length;
    const sessionId = randomUUID();
    const res = await call(api.url, 'POST', '/api/v1/ask', {
      token,
      body: { prompt: 'What could we save?', session_id: sessionId },
    });
    expect(res.status).toBe(200);
    const top = await t.db
      .selectFrom('findings')
      .select(['id'])
      .where('tenant_id', '=', a.tenant.id)
      .where('domain', '=', 'finops')
      .execute();
    expect(top.length).toBeGreaterThan(0);
    const reply = res.body.reply as string;
    expect(res.body.session_id).toBe(sessionId);
    expect(reply).toMatch(
      /^There are \d+ active finops findings\. The biggest saving is finding [0-9a-f-]{36} /,
    );
    expect(reply).not.toMatch(/Unverified|Correcting/);
    const cited = /finding ([0-9a-f-]{36})/.exec(reply)![1]!;
    expect(top.map((f) => f.id)).toContain(cited);

    // The model server saw two requests with the key, the tool and then its result from this tenant.
    const requests = model.requests.slice(before);
    expect(requests).toHaveLength(2);
    for (const r of requests) {
      expect(r.path).toBe('/v1/chat/completions');
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(r.body.model).toBe('local-model');
    }
    expect(JSON.stringify(requests[0]!.body.tools)).toContain('list_findings');
    const system = (requests[0]!.body.messages as Array<{ role: string; content: string }>)[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/only the tools/);
    expect(JSON.stringify(requests[1]!.body.messages)).toContain(cited);

    // The run's events, as a client re-attaching sees them.
    const { events } = await attach(sessionId);
    const kinds = events.map((e) => e.event);
    expect(kinds).toEqual([
      'run.started',
      'tool.started',
      'tool.finished',
      'message.delta',
      'message.delta',
      'message.delta',
      'message.completed',
      'run.completed',
    ]);
    expect(events[1]!.data).toMatchObject({
      tool: 'list_findings',
      input: { domain: 'finops', sort_by: 'savings', limit: 3 },
    });
    expect(events[2]!.data).toMatchObject({ tool: 'list_findings', ok: true });
    expect(events[2]!.data.output_preview).toContain(cited);
    const streamed = events.filter((e) => e.event === 'message.delta').map((e) => e.data.text as string);
    expect(streamed.join('')).toBe(reply);
    expect(events.at(-2)!.data.text).toBe(reply);
    expect(events.at(-1)!.data.reply).toBe(reply);

    const messages = await storedMessages(sessionId);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What could we save?'],
      ['assistant', reply],
    ]);
    const run = await t.db
      .selectFrom('agent_runs')
      .select(['status', 'reply'])
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(run).toEqual({ status: 'completed', reply });
  });

  it('an upstream 429 ends the run with run.failed and stores no reply', async () => {
    mode = 'limited';
    const sessionId = randomUUID();
    const res = await call(api.url, 'POST', '/api/v1/ask', {
      token,
      body: { prompt: 'What could we save?', session_id: sessionId },
    });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(
      /^The agent run failed: The model provider refused the request: HTTP 429: Rate limit reached/,
    );
    expect(res.text).not.toContain(KEY);

    const { events } = await attach(sessionId);
    expect(events.map((e) => e.event)).toEqual(['run.started', 'run.failed']);
    expect(JSON.stringify(events)).not.toContain(KEY);
    const messages = await storedMessages(sessionId);
    expect(messages.map((m) => m.role)).toEqual(['user']);
    const run = await t.db
      .selectFrom('agent_runs')
      .select(['status', 'reply', 'error'])
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(run.status).toBe('failed');
    expect(run.reply).toBeNull();
    expect(run.error).toMatch(/HTTP 429/);
  });

  it('a malformed stream after some text ends with run.failed and nothing half-written', async () => {
    mode = 'broken';
    const sessionId = randomUUID();
    const res = await call(api.url, 'POST', '/api/v1/ask', {
      token,
      body: { prompt: 'What could we save?', session_id: sessionId },
    });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/^The agent run failed: The model provider sent a malformed response: /);
    const { events } = await attach(sessionId);
    expect(events.map((e) => e.event)).toEqual(['run.started', 'message.delta', 'run.failed']);
    expect(events[1]!.data.text).toBe('The biggest');
    expect((await storedMessages(sessionId)).map((m) => m.role)).toEqual(['user']);
  });

  it('deleting the session cancels a streaming turn: run.failed, and nothing stored', async () => {
    mode = 'slow';
    const sessionId = randomUUID();
    const started = Date.now();
    let deleting: Promise<unknown> | undefined;
    const streamed = await readSse(
      `${api.url}/api/v1/stream?${new URLSearchParams({ prompt: 'Keep talking', session_id: sessionId })}`,
      {
        token,
        onEvent: (e) => {
          if (e.event === 'message.delta' && !deleting) {
            deleting = call(api.url, 'DELETE', `/api/v1/sessions/${sessionId}`, { token });
          }
        },
      },
    );
    expect(streamed.events.at(-1)).toMatchObject({
      event: 'run.failed',
      data: { detail: 'Run cancelled: its session was deleted.' },
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await deleting).toMatchObject({ status: 204 });
    expect(await storedMessages(sessionId)).toEqual([]);
  });
});
