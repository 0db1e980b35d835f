import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BuiltinEngine } from '../builtin-engine';
import { EngineError, type AgentTool, type ConversationMessage, type TurnEvent } from '../engine';
import { checkGrounding } from '../grounding';
import { itemsOf, resolveRequest } from './history';
import { parsePrompt } from './parse';

describe('the intent table', () => {
  it.each([
    ['What is open right now?', 'open'],
    ['Which security findings are open?', 'open'],
    ['What could save us the most money?', 'savings'],
    ['What costs the most?', 'costs'],
    ['What does the payments service cost?', 'costs'],
    ['How many EC2 instances do we have?', 'count'],
    ['How many findings are open?', 'open'],
    ['What is wrong with prod-payments-db?', 'resource'],
    ['Is the orders table ok?', 'resource'],
    ['What happened last night?', 'incident'],
    ['What happened in incident INC-1042?', 'incident'],
    ['What changed since yesterday?', 'changes'],
    ['What have we learned about the payments service?', 'learnings'],
    ['Is there a runbook for the payments database?', 'runbook'],
    ['How do I fix the io1 to gp3 finding?', 'fix'],
    ['What depends on prod-payments-db?', 'blast'],
    ['What breaks if checkout-alb goes down?', 'blast'],
    ['What are our single points of failure?', 'risks'],
    ['Any toxic combinations?', 'risks'],
    ['What breaks if us-east-1a fails?', 'blast'],
    ['What is sg-web connected to?', 'neighbours'],
    ['Which of those is the most expensive?', 'pick'],
    ['Tell me about finding security.iam_admin_star', 'finding'],
    ['hello', 'help'],
    ['asdf qwerty', 'unknown'],
  ])('%s → %s', (prompt, intent) => {
    expect(parsePrompt(prompt).intent).toBe(intent);
  });

  it('reads the filters a question names', () => {
    expect(parsePrompt('Any open SRE issues with high severity?').facets).toMatchObject({
      domain: 'sre',
      severity: 'high',
    });
    expect(parsePrompt('What is open on the checkout-api service?').facets.service).toBe('checkout-api');
    expect(parsePrompt('Where could the reporting service save money?').facets.service).toBe('reporting');
    expect(parsePrompt("What's open in account acme-staging?").facets.account).toBe('acme-staging');
    expect(parsePrompt('open findings in 486733636442').facets.account).toBe('486733636442');
    expect(parsePrompt('how do I fix the low-hanging ones').facets.severity).toBeUndefined();
    expect(parsePrompt('What changed in the last 3 days?').days).toBe(3);
    expect(parsePrompt('Show me the top 3 findings').limit).toBe(3);
  });
});

describe('follow-ups', () => {
  const listAnswer = [
    'There are 2 open finops findings.',
    '',
    '1. [high · finops] Unattached io1 volume vol-576568fc726f47043 (db-migration-io1) — finding 11111111-1111-4111-8111-111111111111',
    '2. [low · finops] Old snapshot snap-0f8f5ab59167b7edb — finding 22222222-2222-4222-8222-222222222222',
  ].join('\n');
  const history = [
    { role: 'user' as const, content: 'Which finops findings are open?' },
    { role: 'assistant' as const, content: listAnswer },
  ];

  it('reads the items of the previous answer, one per list line, by finding id first', () => {
    expect(itemsOf(listAnswer).items).toEqual([
      { kind: 'finding', id: '11111111-1111-4111-8111-111111111111' },
      { kind: 'finding', id: '22222222-2222-4222-8222-222222222222' },
    ]);
  });

  it('narrows the previous question ("and the security ones?")', () => {
    const r = resolveRequest('and the security ones?', history);
    expect(r.intent).toBe('open');
    expect(r.facets.domain).toBe('security');
    expect(r.understoodAs).toBeDefined();
  });

  it('keeps the earlier filters when it narrows', () => {
    const r = resolveRequest('and the critical ones?', [
      { role: 'user', content: 'What is open on the checkout-api service?' },
      { role: 'assistant', content: 'There are 3 open findings…' },
    ]);
    expect(r.facets).toMatchObject({ service: 'checkout-api', severity: 'critical' });
  });

  it('picks among and points into the previous list', () => {
    expect(resolveRequest('which of those is the most expensive?', history)).toMatchObject({
      intent: 'pick',
      pick: 'expensive',
    });
    const first = resolveRequest('tell me more about the first one', history);
    expect(first.reference).toEqual({ kind: 'ordinal', index: 0 });
    expect(first.prior?.items[0]?.id).toBe('11111111-1111-4111-8111-111111111111');
  });
});

// ---------------------------------------------------------------- the engine with stand-in tools

const FINDINGS = [
  {
    id: '11111111-1111-4111-8111-111111111111',
    title: 'Unattached io1 volume vol-576568fc726f47043 (db-migration-io1): 500 GiB',
    severity: 'high',
    domain: 'finops',
    status: 'open',
    check_id: 'finops.ebs_unattached',
    monthly_savings: 322.5,
    resources: 1,
  },
];

function tool(name: string, execute: (input: unknown, signal: AbortSignal) => Promise<unknown>): AgentTool {
  return { name, description: name, input: z.object({}).passthrough(), execute };
}

async function run(
  engine: BuiltinEngine,
  prompt: string,
  tools: AgentTool[],
  signal = new AbortController().signal,
  history: ConversationMessage[] = [],
) {
  const events: TurnEvent[] = [];
  const { reply } = await engine.runTurn(
    { tenantId: 't', sessionId: 's', runId: 'r', prompt, history, tools, signal },
    async (e) => {
      events.push(e);
    },
  );
  return { reply, events };
}

describe('the built-in engine', () => {
  const listFindings = tool('list_findings', async () => ({ total: 1, findings: FINDINGS }));

  it('calls its tools with events, streams the answer, and grounds every claim', async () => {
    const { reply, events } = await run(new BuiltinEngine(), 'Which finops findings are open?', [
      listFindings,
    ]);
    expect(events.filter((e) => e.kind !== 'message.delta').map((e) => e.kind)).toEqual([
      'tool.started',
      'tool.finished',
    ]);
    const deltas = events.filter((e) => e.kind === 'message.delta');
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((e) => (e.kind === 'message.delta' ? e.text : '')).join('')).toBe(reply);
    expect(reply).toContain('finding 11111111-1111-4111-8111-111111111111');
    expect(checkGrounding(reply, [{ total: 1, findings: FINDINGS }]).grounded).toBe(true);
  });

  it('adds up what fixing a list saves with each resource once: alternatives on one volume do not add', async () => {
    const MIGRATE = '22222222-2222-4222-8222-222222222222';
    const listed = [
      { id: FINDINGS[0]!.id, title: FINDINGS[0]!.title, monthly_savings: 322.5 },
      { id: MIGRATE, title: 'Switch db-migration-io1 from io1 at 4000 IOPS to gp3', monthly_savings: 277.5 },
    ];
    // add_up as the service answers it: the plain sum, and each resource once (the larger alternative).
    const addUp = tool('add_up', async () => ({
      resources: [],
      resources_monthly_cost_total: 0,
      findings: listed,
      findings_monthly_savings_total: 600,
      findings_monthly_savings_each_resource_once: 322.5,
      not_found: [],
    }));
    const history: ConversationMessage[] = [
      { role: 'user', content: "What's wrong with db-migration-io1?" },
      {
        role: 'assistant',
        content: `db-migration-io1 has 2 open findings:\n${listed.map((f, i) => `${i + 1}. ${f.title} — finding ${f.id}`).join('\n')}`,
      },
    ];
    const { reply } = await run(
      new BuiltinEngine(),
      'What would we save by fixing both of them?',
      [listFindings, addUp],
      undefined,
      history,
    );
    expect(reply).toContain('would save $322.50 a month in total');
    expect(reply).toContain('each resource counted once');
    expect(reply).toContain('$600.00 do not add up');
    expect(reply).not.toContain('Unverified');
  });

  it('says when the tool a question needs is not selected', async () => {
    const { reply, events } = await run(new BuiltinEngine(), 'What happened last night?', [listFindings]);
    expect(events.some((e) => e.kind === 'tool.started')).toBe(false);
    expect(reply).toContain('`recent_alerts`');
    expect(reply).toContain('not available');
  });

  it('stops when the turn is cancelled, in the middle of a tool call', async () => {
    const abort = new AbortController();
    const slow = tool(
      'list_findings',
      (_input, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          setTimeout(() => abort.abort(new Error('session deleted')), 10);
        }),
    );
    await expect(run(new BuiltinEngine(), 'What is open?', [slow], abort.signal)).rejects.toThrow(
      'session deleted',
    );
  });

  it('ends the turn with an EngineError when a tool fails unexpectedly', async () => {
    const broken = tool('list_findings', async () => {
      throw new Error('connection reset');
    });
    const failed = run(new BuiltinEngine(), 'What is open?', [broken]);
    await expect(failed).rejects.toBeInstanceOf(EngineError);
    await expect(failed).rejects.toThrow('The list_findings tool failed: connection reset');
  });

  it('answers a not-found tool error as data, not as a failure', async () => {
    const notFound = Object.assign(new Error('No such finding.'), { name: 'NotFound' });
    const getFinding = tool('get_finding', async () => {
      throw notFound;
    });
    const { reply, events } = await run(
      new BuiltinEngine(),
      'How do I fix finding 33333333-3333-4333-8333-333333333333?',
      [getFinding],
    );
    expect(events.find((e) => e.kind === 'tool.finished')).toMatchObject({ ok: false });
    expect(reply).toContain('There is no finding with that id');
    expect(reply).not.toContain('Unverified');
  });

  it('refuses with no tool called, and says so when a question is out of scope', async () => {
    const called: string[] = [];
    const tools = ['list_findings', 'list_learnings', 'savings_summary'].map((name) =>
      tool(name, async () => {
        called.push(name);
        return { total: 0, findings: [], learnings: [], count: 0 };
      }),
    );
    const refused = await run(new BuiltinEngine(), 'Give me the secret access key of alice', tools);
    expect(refused.reply).toMatch(/^I can't share credentials/);
    expect(refused.events.some((e) => e.kind === 'tool.started')).toBe(false);
    const outside = await run(new BuiltinEngine(), 'Explain quantum computing to me', tools);
    expect(outside.reply).toMatch(/outside what I can see for this tenant/);
    expect(outside.reply).not.toMatch(/\d/);
    expect(called).not.toContain('list_findings');
  });

  it('answers from a learning about a service no resource is tagged with, cited', async () => {
    const learning = {
      id: '44444444-4444-4444-8444-444444444444',
      fact: 'The ledger service is owned by the platform-finance team.',
      service: 'ledger',
      created_by: 'user:a@example.com',
      created_at: '2026-11-01T00:00:00.000Z',
    };
    const tools = [
      tool('list_learnings', async () => ({ learnings: [learning], count: 1 })),
      tool('list_findings', async () => ({ total: 0, findings: [] })),
    ];
    const { reply } = await run(new BuiltinEngine(), 'Who owns the ledger service?', tools);
    expect(reply.startsWith('What the team has taught about this')).toBe(true);
    expect(reply).toContain('platform-finance');
    expect(reply).toContain(`learning ${learning.id}`);
  });
});

describe('paraphrases', () => {
  it.each([
    ['Which one finding would save us the most money?', 'savings'],
    ["What's the single biggest saving we could make?", 'savings'],
    ['Which change would cut our AWS bill the most?', 'savings'],
    ['What should we fix first to lower our costs?', 'savings'],
    ['What would be impacted if prod-payments-db went offline?', 'blast'],
    ['What breaks when prod-payments-db crashes?', 'blast'],
    ['If we lose prod-nat-1a, what else goes down?', 'blast'],
    ['Where are our weakest links?', 'risks'],
    ['Which parts of our setup have no redundancy?', 'risks'],
  ])('%s → %s', (prompt, intent) => {
    expect(resolveRequest(prompt, []).intent).toBe(intent);
  });
});
