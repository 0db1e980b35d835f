import { APICallError } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EngineError, type AgentTool, type TurnEvent, type TurnInput } from './engine';
import { CORRECTING, createModelEngine } from './loop';

type CallOptions = Parameters<MockLanguageModelV3['doStream']>[0];
type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;
type Part = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

const FINDING = '3f1a0c1e-1111-4000-8000-000000000001';
const VOLUME = 'vol-0123456789abcdef0';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** One model call's stream: text deltas (strings) and tool calls, then a finish. */
function step(...items: Array<string | { tool: string; input: unknown; id?: string }>): Part[] {
  const parts: Part[] = [{ type: 'stream-start', warnings: [] }];
  const texts = items.filter((i): i is string => typeof i === 'string');
  if (texts.length) {
    parts.push({ type: 'text-start', id: 't' });
    for (const t of texts) parts.push({ type: 'text-delta', id: 't', delta: t });
    parts.push({ type: 'text-end', id: 't' });
  }
  let n = 0;
  for (const i of items) {
    if (typeof i === 'string') continue;
    parts.push({
      type: 'tool-call',
      toolCallId: i.id ?? `call-${++n}`,
      toolName: i.tool,
      input: JSON.stringify(i.input),
    });
  }
  const toolCalls = items.some((i) => typeof i !== 'string');
  parts.push({
    type: 'finish',
    finishReason: { unified: toolCalls ? 'tool-calls' : 'stop', raw: toolCalls ? 'tool_calls' : 'stop' },
    usage,
  });
  return parts;
}

/** A model that plays one scripted response per call (a stream, or an error thrown by doStream). */
function scriptedModel(responses: Array<Part[] | Error>) {
  const calls: CallOptions[] = [];
  const model = new MockLanguageModelV3({
    doStream: async (options) => {
      calls.push(options);
      const next = responses[calls.length - 1];
      if (!next) throw new Error(`the script has no response for call ${calls.length}`);
      if (next instanceof Error) throw next;
      return { stream: convertArrayToReadableStream(next) };
    },
  });
  return { model, calls };
}

function findingsTool(seen: unknown[] = []): AgentTool {
  return {
    name: 'list_findings',
    description: 'List findings',
    input: z.object({ domain: z.enum(['finops', 'security']).optional(), limit: z.number().default(15) }),
    async execute(input, signal) {
      seen.push({ input, signal });
      return {
        total: 2,
        findings: [
          { id: FINDING, title: `Unattached volume ${VOLUME}`, monthly_savings: 322.5 },
          { id: '3f1a0c1e-1111-4000-8000-000000000002', title: 'Open SSH', monthly_savings: 0 },
        ],
        since: new Date('2026-10-31T00:00:00Z'),
      };
    },
  };
}

function turn(tools: AgentTool[], over: Partial<TurnInput> = {}): TurnInput {
  return {
    tenantId: 't',
    sessionId: 's',
    runId: 'r',
    prompt: 'What could we save?',
    history: [],
    tools,
    signal: new AbortController().signal,
    ...over,
  };
}

async function play(engine: ReturnType<typeof createModelEngine>, input: TurnInput) {
  const events: TurnEvent[] = [];
  const { reply } = await engine.runTurn(input, async (e) => {
    events.push(e);
  });
  return { events, reply, text: deltas(events) };
}

const deltas = (events: TurnEvent[]) =>
  events.flatMap((e) => (e.kind === 'message.delta' ? [e.text] : [])).join('');

/** The text of the prompt's last user message. */
function lastUserText(call: CallOptions): string {
  const user = call.prompt.filter((m) => m.role === 'user').at(-1);
  return (user?.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

describe('the model loop', () => {
  it('runs tool calls, streams the answer and returns it as the reply', async () => {
    const { model, calls } = scriptedModel([
      step({ tool: 'list_findings', input: { domain: 'finops' } }),
      step(
        'There are 2 active findings. ',
        `The biggest is ${FINDING} on ${VOLUME}: `,
        'it saves $322.50 a month.',
      ),
    ]);
    const seen: Array<{ input: unknown; signal: AbortSignal }> = [];
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const { events, reply, text } = await play(
      engine,
      turn([findingsTool(seen)], {
        history: [
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: 'Hi, ask me about your environment.' },
        ],
      }),
    );

    expect(events.map((e) => e.kind)).toEqual([
      'tool.started',
      'tool.finished',
      'message.delta',
      'message.delta',
      'message.delta',
    ]);
    // tool.started shows the input as the tool gets it (parsed, defaults applied).
    expect(events[0]).toEqual({
      kind: 'tool.started',
      tool: 'list_findings',
      input: { domain: 'finops', limit: 15 },
    });
    expect(events[1]).toMatchObject({ kind: 'tool.finished', tool: 'list_findings', ok: true });
    const preview = (events[1] as { output_preview: string }).output_preview;
    expect(preview).toContain(FINDING);
    expect(preview).toContain('"since":"2026-10-31T00:00:00.000Z"');
    expect(reply).toBe(
      `There are 2 active findings. The biggest is ${FINDING} on ${VOLUME}: it saves $322.50 a month.`,
    );
    expect(text).toBe(reply);

    // The tool got its parsed input (defaults applied) and an abort signal.
    expect(seen).toHaveLength(1);
    expect(seen[0]!.input).toEqual({ domain: 'finops', limit: 15 });
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);

    // First call: the system prompt, the history, the prompt, and the tool with its JSON schema.
    const first = calls[0]!;
    const system = first.prompt.find((m) => m.role === 'system');
    expect(system?.content).toMatch(/only the tools/);
    expect(system?.content).toMatch(/[Cc]ite the ids/);
    expect(system?.content).toMatch(/number.*must come from tool output/);
    expect(system?.content).toMatch(/does not answer/);
    expect(first.prompt.filter((m) => m.role !== 'system').map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);
    expect(lastUserText(first)).toBe('What could we save?');
    expect(first.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        name: 'list_findings',
        description: 'List findings',
        inputSchema: expect.objectContaining({ type: 'object' }),
      }),
    ]);
    // Second call carries the tool call and its result.
    const second = calls[1]!;
    const toolMessage = second.prompt.find((m) => m.role === 'tool');
    expect(JSON.stringify(toolMessage)).toContain(FINDING);
  });

  it('keeps text of several steps apart and reports failing and unknown tools', async () => {
    const failing: AgentTool = {
      name: 'get_resource',
      description: 'A resource',
      input: z.object({ resource: z.string() }),
      async execute() {
        throw new Error('no resource named web-9');
      },
    };
    const { model, calls } = scriptedModel([
      step(
        'Let me look.',
        { tool: 'get_resource', input: { resource: 'web-9' } },
        { tool: 'drop_table', input: {} },
      ),
      step('I could not find web-9.'),
    ]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const { events, reply } = await play(engine, turn([findingsTool(), failing]));
    expect(events).toEqual([
      { kind: 'message.delta', text: 'Let me look.' },
      { kind: 'tool.started', tool: 'get_resource', input: { resource: 'web-9' } },
      { kind: 'tool.started', tool: 'drop_table', input: {} },
      {
        kind: 'tool.finished',
        tool: 'drop_table',
        ok: false,
        output_preview: expect.stringMatching(/drop_table/),
      },
      {
        kind: 'tool.finished',
        tool: 'get_resource',
        ok: false,
        output_preview: 'no resource named web-9',
      },
      { kind: 'message.delta', text: '\n\nI could not find web-9.' },
    ]);
    expect(reply).toBe('Let me look.\n\nI could not find web-9.');
    // The model was told about both failures.
    expect(JSON.stringify(calls[1]!.prompt)).toContain('no resource named web-9');
  });

  it('asks the model once to correct an ungrounded answer and keeps the corrected one', async () => {
    const { model, calls } = scriptedModel([
      step({ tool: 'list_findings', input: {} }),
      step('There are 7 active findings; ', `${FINDING} saves $900 a month.`),
      step('There are 2 active findings; ', `${FINDING} saves $322.50 a month.`),
    ]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const { events, reply, text } = await play(engine, turn([findingsTool()]));
    expect(calls).toHaveLength(3);
    const followUp = lastUserText(calls[2]!);
    expect(followUp).toMatch(/numbers: 7, \$900/);
    expect(followUp).toMatch(/using only tool output/);
    // The correction sees the first answer and the tool result.
    expect(JSON.stringify(calls[2]!.prompt)).toContain('There are 7 active findings');
    expect(calls[2]!.prompt.some((m) => m.role === 'tool')).toBe(true);
    expect(reply).toBe(`There are 2 active findings; ${FINDING} saves $322.50 a month.`);
    expect(reply).not.toMatch(/Unverified/);
    // The stream shows the first answer, the marker, then the correction.
    expect(text).toBe(`There are 7 active findings; ${FINDING} saves $900 a month.${CORRECTING}${reply}`);
    expect(events.filter((e) => e.kind === 'tool.started')).toHaveLength(1);
  });

  it('names what stays ungrounded after the one correction', async () => {
    const made = '3f1a0c1e-9999-4000-8000-000000000009';
    const { model, calls } = scriptedModel([
      step({ tool: 'list_findings', input: {} }),
      step(`Finding ${made} saves $900.`),
      step(`Finding ${made} saves $900 a month, I am sure.`),
    ]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const { reply, text } = await play(engine, turn([findingsTool()]));
    expect(calls).toHaveLength(3);
    expect(lastUserText(calls[2]!)).toContain(`ids: ${made}`);
    expect(reply).toMatch(
      new RegExp(`^Finding ${made} saves \\$900 a month, I am sure\\.\\n\\nUnverified: `),
    );
    expect(reply).toMatch(/Unverified: \$900, 3f1a0c1e-9999-4000-8000-000000000009 \(not found/);
    expect(text.endsWith(reply)).toBe(true);
  });

  it('does not correct a grounded answer or an answer without claims', async () => {
    const { model, calls } = scriptedModel([step('I cannot tell from the data I have.')]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const { reply } = await play(engine, turn([findingsTool()]));
    expect(reply).toBe('I cannot tell from the data I have.');
    expect(calls).toHaveLength(1);
  });

  it("gives the model the tenant's learnings, and a claim taken from one is grounded", async () => {
    const learning = '3f1a0c1e-2222-4000-8000-000000000001';
    const { model, calls } = scriptedModel([
      step(`Month-end jobs push the database CPU above 90% for 2 hours (learning ${learning}).`),
    ]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const { reply } = await play(
      engine,
      turn([findingsTool()], {
        learnings: [
          {
            id: learning,
            fact: 'Month-end jobs push the database CPU above 90% for 2 hours.',
            service: 'payments',
          },
        ],
      }),
    );
    const system = calls[0]!.prompt.find((m) => m.role === 'system');
    expect(system?.content).toContain(
      `- [${learning}] (payments) Month-end jobs push the database CPU above 90% for 2 hours.`,
    );
    // No correction round: 90%, 2 and the learning's id all come from the turn's data.
    expect(calls).toHaveLength(1);
    expect(reply).not.toMatch(/Unverified/);
  });

  it('says nothing of learnings when the tenant has none', async () => {
    const { model, calls } = scriptedModel([step('Nothing recorded.')]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    await play(engine, turn([findingsTool()]));
    const system = calls[0]!.prompt.find((m) => m.role === 'system');
    expect(system?.content).not.toMatch(/active learnings/);
  });

  it('bounds the steps: the last one may not call tools', async () => {
    const call = { tool: 'list_findings', input: {} };
    const { model, calls } = scriptedModel([step(call), step(call), step('There are 2 findings.')]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 3, maxRetries: 0 });
    const { reply } = await play(engine, turn([findingsTool()]));
    expect(reply).toBe('There are 2 findings.');
    expect(calls.map((c) => c.toolChoice?.type)).toEqual(['auto', 'auto', 'none']);

    // A model that calls tools anyway ends the turn without an answer: a failure, not an empty reply.
    const stubborn = scriptedModel([step(call), step(call)]);
    const engine2 = createModelEngine(stubborn.model, { name: 'test', maxSteps: 2, maxRetries: 0 });
    await expect(play(engine2, turn([findingsTool()]))).rejects.toThrow(
      'The model did not answer within 2 steps: it kept calling tools.',
    );
  });

  it('turns model failures into engine errors with a clear detail', async () => {
    const limited = new APICallError({
      message: 'Rate limit reached for requests',
      url: 'http://model/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 429,
      responseBody: '{"error":{"message":"Rate limit reached for requests"}}',
    });
    const cases: Array<[Array<Part[] | Error>, RegExp]> = [
      [[limited], /^The model provider refused the request: HTTP 429: Rate limit reached/],
      [
        [new APICallError({ message: 'Bad gateway', url: 'u', requestBodyValues: {}, statusCode: 502 })],
        /^The model provider failed: HTTP 502: Bad gateway/,
      ],
      [[new Error('socket hang up')], /^The model call failed: socket hang up/],
      [
        [
          [
            { type: 'stream-start', warnings: [] },
            { type: 'error', error: new Error('stream broke') },
          ],
        ],
        /stream broke/,
      ],
    ];
    for (const [responses, detail] of cases) {
      const { model } = scriptedModel(responses);
      const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
      const error = await play(engine, turn([findingsTool()])).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as Error).message).toMatch(detail);
    }
  });

  it('fails after a tool call when the second model call fails, and never leaks the key', async () => {
    const key = 'sk-test-secret-123';
    const { model } = scriptedModel([
      step({ tool: 'list_findings', input: {} }),
      new APICallError({ message: `Invalid key ${key}`, url: 'u', requestBodyValues: {}, statusCode: 401 }),
    ]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0, secrets: [key] });
    const events: TurnEvent[] = [];
    const error = await engine
      .runTurn(turn([findingsTool()]), async (e) => {
        events.push(e);
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toBe(
      'The model provider refused the request: HTTP 401: Invalid key [redacted]',
    );
    expect(events.map((e) => e.kind)).toEqual(['tool.started', 'tool.finished']);
  });

  it('stops when the turn is aborted', async () => {
    const controller = new AbortController();
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<Part>({
          start(c) {
            c.enqueue({ type: 'stream-start', warnings: [] });
            c.enqueue({ type: 'text-start', id: 't' });
            c.enqueue({ type: 'text-delta', id: 't', delta: 'Working' });
            // …and never ends.
          },
        }),
      }),
    });
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const events: TurnEvent[] = [];
    const running = engine.runTurn(turn([findingsTool()], { signal: controller.signal }), async (e) => {
      events.push(e);
      controller.abort(new Error('session deleted'));
    });
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect(events).toEqual([{ kind: 'message.delta', text: 'Working' }]);
  });

  it('passes an error of the event sink through and stops the model', async () => {
    const { model } = scriptedModel([step('a', 'b', 'c')]);
    const engine = createModelEngine(model, { name: 'test', maxSteps: 4, maxRetries: 0 });
    const error = await engine
      .runTurn(turn([]), async () => {
        throw new EngineError('The run already ended.');
      })
      .catch((e: unknown) => e);
    expect(error).toEqual(new EngineError('The run already ended.'));
  });
});
