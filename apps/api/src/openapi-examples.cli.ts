import { readFileSync, writeFileSync } from 'node:fs';
import { connectEnvironment, execDemoCommand, requestScan, runResilience, runScan } from '@opsi/core';
import { QUEUE_NAMES } from '@opsi/jobs';
import { prepareTemplateDatabase } from '@opsi/db/testing';
import {
  call,
  createTenantWithUser,
  createTestContext,
  loginOverHttp,
  mintTestToken,
  readSse,
  startTestApi,
  startTestWorker,
} from '@opsi/test-support';
import { allRoutes } from './app';
import { EXAMPLES_FILE, trimExample, type ExampleSet } from './openapi-examples';

// `npm run openapi:examples`: records a real answer of every documented endpoint, for the API reference.
// It runs the API and the worker (the built-in agent engine) in this process against a scratch database
// cloned from the test template and a Redis prefix of its own, with a scanned demo environment, calls
// each route as a client would, and writes apps/api/src/openapi-examples.json (lists cut to 3 items,
// secrets replaced). Then run `npm run openapi`. Routes it has no recipe for are listed, not guessed.

const SECRET = `opsi_${'EXAMPLExEXAMPLExEXAMPLExEXAMPLExEXAMPLExEXA'.slice(0, 43)}`;

await prepareTemplateDatabase();
const t = await createTestContext();
const api = await startTestApi(t);
const worker = await startTestWorker(t, {
  AGENT_ENGINE: 'builtin',
  WORKER_QUEUES: [...QUEUE_NAMES], // plans, triage and incident investigations too
});
const url = api.url;
const examples: ExampleSet = {};
try {
  const member = await createTenantWithUser(t, { slug: 'acme' });
  await connectEnvironment(t.db, member.tenant.id, {
    kind: 'demo',
    seed: 42,
    size: 'small',
    epoch: '2026-11-01',
  });
  const scan = await runScan(t.db, (await requestScan(t.db, null, member.tenant.id, 'examples')).id);
  await runResilience(t.db, member.tenant.id, { scanId: scan.id }); // the worker's job after a scan
  const rw = (await mintTestToken(t, member, 'read_write', { name: 'ci-pipeline' })).token;
  const browser = await loginOverHttp(url, member.user.email, member.password);
  const session = { cookie: browser.cookie, 'x-csrf-token': browser.csrf };

  const findings = (await call(url, 'GET', '/api/v1/pulse/findings', { token: rw })).body.findings;
  const finding = findings[0];
  let rerunnable: { id: string; seq: number } | undefined;
  for (const f of findings) {
    const audit = (await call(url, 'GET', `/api/pulse/findings/${f.id}/audit`, { token: rw })).body;
    const step = audit.steps.find((s: { rerunnable: boolean }) => s.rerunnable);
    if (step) {
      rerunnable = { id: f.id, seq: step.seq };
      break;
    }
  }
  const recommendation = (await call(url, 'GET', '/api/v1/pulse/recommendations', { token: rw })).body
    .recommendations[0];
  const spare = await mintTestToken(t, member, 'read', { name: 'old-laptop' });
  type Plan = { status: string; steps: PlanStep[] };
  type PlanStep = {
    seq: number;
    final: boolean;
    status: string;
    fix_command: { command: string } | null;
    verification: unknown;
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers read as a client reads JSON
  const get = async (path: string): Promise<any> => (await call(url, 'GET', path, { token: rw })).body;
  /** Polls `path` until `ok` holds (bounded); background work (plans, checks) settles first. */
  const settle = async <T>(path: string, ok: (body: T) => boolean): Promise<T> => {
    for (let i = 0; i < 600; i++) {
      const body = await get(path);
      if (ok(body)) return body;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${path} never settled`);
  };
  // Resolution plans: an unattached volume taken to resolved, an idle one's plan regenerated and a step skipped.
  const volumes = findings.filter((f: { check_id: string }) => f.check_id === 'finops.ebs_unattached');
  const planFinding = volumes[0] ?? finding;
  const otherFinding = findings.find(
    (f: { id: string; check_id: string }) => f.id !== planFinding.id && f.check_id !== planFinding.check_id,
  );
  let planId = '';
  let otherPlanId = '';
  const planPath = () => `/api/pulse/plans/${planId}`;
  const ready = (p: Plan) => p.status !== 'generating' && p.status !== 'finalizing';
  const step = (p: Plan, which: (s: PlanStep) => boolean) => p.steps.find(which)!;
  let incidentId = '';

  type Recipe = {
    path: string;
    body?: unknown;
    auth?: 'token' | 'session' | 'none';
    headers?: Record<string, string>;
  };
  const recipes: Record<string, () => Recipe | Promise<Recipe>> = {
    'GET /api/v1/version': () => ({ path: '/api/v1/version', auth: 'none' }),
    'GET /api/v1/me': () => ({ path: '/api/v1/me' }),
    'GET /api/v1/tools/available': () => ({ path: '/api/v1/tools/available' }),
    'POST /api/v1/tokens': () => ({
      path: '/api/v1/tokens',
      auth: 'session',
      body: { name: 'deploy-bot', scope: 'read', expires_in_days: 30 },
    }),
    'GET /api/v1/tokens': () => ({ path: '/api/v1/tokens' }),
    'DELETE /api/v1/tokens/:id': () => ({ path: `/api/v1/tokens/${spare.id}` }),
    'GET /api/v1/team': () => ({ path: '/api/v1/team' }),
    'GET /api/v1/audit': () => ({ path: '/api/v1/audit?limit=3' }),
    'GET /api/v1/audit/verify': () => ({ path: '/api/v1/audit/verify' }),
    'POST /api/v1/ask': () => ({
      path: '/api/v1/ask',
      body: { prompt: 'What are my most expensive open findings?', session_id: 'triage-monday' },
    }),
    'POST /api/v1/sessions': () => ({ path: '/api/v1/sessions', body: { name: 'Cost review' } }),
    'GET /api/v1/sessions': () => ({ path: '/api/v1/sessions' }),
    'PATCH /api/v1/sessions/:id': () => ({
      path: '/api/v1/sessions/triage-monday',
      body: { name: 'Monday triage' },
    }),
    'GET /api/v1/history': () => ({ path: '/api/v1/history?session_id=triage-monday' }),
    'GET /api/v1/pulse/overview': () => ({ path: '/api/v1/pulse/overview' }),
    'GET /api/v1/pulse/findings': () => ({ path: '/api/v1/pulse/findings?severity=high' }),
    'GET /api/v1/pulse/findings/:id': () => ({ path: `/api/v1/pulse/findings/${finding.id}` }),
    'PATCH /api/v1/pulse/findings/:id/status': () => ({
      path: `/api/v1/pulse/findings/${findings[1].id}/status`,
      body: { status: 'acknowledged' },
    }),
    'GET /api/v1/pulse/recommendations': () => ({ path: '/api/v1/pulse/recommendations' }),
    'GET /api/v1/pulse/resolved': () => ({ path: '/api/v1/pulse/resolved' }),
    'POST /api/v1/pulse/findings/:id/reinvestigate': () => ({
      path: `/api/v1/pulse/findings/${finding.id}/reinvestigate`,
    }),
    'GET /api/pulse/findings/:id': () => ({ path: `/api/pulse/findings/${finding.id}` }),
    'GET /api/pulse/findings/:id/audit': () => ({ path: `/api/pulse/findings/${finding.id}/audit` }),
    'POST /api/pulse/findings/:id/audit/:seq/run': () => ({
      path: `/api/pulse/findings/${rerunnable!.id}/audit/${rerunnable!.seq}/run`,
    }),
    'POST /api/pulse/findings/:id/reinvestigate': () => ({
      path: `/api/pulse/findings/${findings[2].id}/reinvestigate`,
    }),
    'POST /api/pulse/recommendations/:id/reinvestigate': () => ({
      path: `/api/pulse/recommendations/${recommendation.id}/reinvestigate`,
    }),
    'GET /api/v1/notifications': () => ({ path: '/api/v1/notifications?limit=3' }),
    'POST /api/v1/notifications/read-all': () => ({ path: '/api/v1/notifications/read-all' }),
    'POST /api/v1/learnings': () => ({
      path: '/api/v1/learnings',
      body: {
        fact: 'The batch cluster in us-west-2 is scaled to zero on weekends on purpose.',
        service: 'batch',
      },
    }),
    'GET /api/v1/learnings': () => ({ path: '/api/v1/learnings' }),
    'GET /api/v1/graph/summary': () => ({ path: '/api/v1/graph/summary' }),
    'GET /api/v1/graph/search': () => ({ path: '/api/v1/graph/search?q=nat&limit=3' }),
    'GET /api/v1/graph/blast-radius/:id': async () => {
      const hit = (await call(url, 'GET', '/api/v1/graph/search?q=nat&limit=1', { token: rw })).body
        .results[0];
      return { path: `/api/v1/graph/blast-radius/${hit.id}?depth=2` };
    },
    'GET /api/v1/graph/health': () => ({ path: '/api/v1/graph/health?limit=3' }),
    'GET /api/v1/graph/risks': () => ({ path: '/api/v1/graph/risks' }),
    'GET /api/v1/graph/drift': () => ({ path: '/api/v1/graph/drift?days=7' }),
    'GET /api/v1/resilience/status': () => ({ path: '/api/v1/resilience/status' }),
    'GET /api/v1/resilience/findings': () => ({ path: '/api/v1/resilience/findings' }),
    'POST /api/v1/plan-review': () => ({
      path: '/api/v1/plan-review',
      body: { plan: readFileSync(new URL('../../../docs/examples/demo-plan.txt', import.meta.url), 'utf8') },
    }),
    'POST /api/v1/reports/morning': () => ({ path: '/api/v1/reports/morning' }),
    'GET /api/v1/reports/morning/latest': async () => {
      for (let i = 0; i < 120; i++) {
        const res = await call(url, 'GET', '/api/v1/reports/morning/latest', { token: rw });
        if (res.status === 200) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      return { path: '/api/v1/reports/morning/latest' };
    },
    'GET /api/v1/reports/morning': () => ({ path: '/api/v1/reports/morning?limit=3' }),
    'GET /api/v1/marketplace/tools': () => ({ path: '/api/v1/marketplace/tools' }),
    'POST /api/v1/marketplace/tenant/tools': () => ({
      path: '/api/v1/marketplace/tenant/tools',
      body: { tool_id: 'alertmanager' },
    }),
    'GET /api/v1/marketplace/tenant/tools': () => ({ path: '/api/v1/marketplace/tenant/tools' }),
    'DELETE /api/v1/marketplace/tenant/tools/:id': () => ({
      path: '/api/v1/marketplace/tenant/tools/alertmanager',
    }),
    'POST /api/v1/runbooks': () => ({
      path: '/api/v1/runbooks',
      body: {
        title: 'Payments database failover',
        service: 'payments',
        applies_to: { resource_types: ['aws_db_instance'] },
        steps: [
          'Confirm the standby is in sync.',
          'Fail over with aws rds reboot-db-instance --force-failover.',
        ],
      },
    }),
    'GET /api/v1/runbooks': () => ({ path: '/api/v1/runbooks?service=payments' }),
    'PATCH /api/v1/learnings/:id': async () => {
      const learning = (await call(url, 'GET', '/api/v1/learnings', { token: rw })).body.learnings[0];
      return { path: `/api/v1/learnings/${learning.id}`, body: { status: 'archived' } };
    },
    'POST /api/pulse/findings/:id/resolution-plan': () => ({
      path: `/api/pulse/findings/${planFinding.id}/resolution-plan`,
    }),
    'GET /api/pulse/plans/:id': async () => {
      planId = (
        await call(url, 'POST', `/api/pulse/findings/${planFinding.id}/resolution-plan`, { token: rw })
      ).body.id;
      await settle(planPath(), ready);
      return { path: planPath() };
    },
    'POST /api/pulse/plans/:id/steps/:seq/verify': async () => {
      const plan = await get(planPath());
      const fix = step(plan, (s) => s.fix_command !== null && s.verification !== null);
      await execDemoCommand(t.db, member.tenant.id, fix.fix_command!.command); // the user runs the fix
      return { path: `${planPath()}/steps/${fix.seq}/verify` };
    },
    'POST /api/pulse/plans/:id/steps/:seq/confirm': async () => {
      const plan = await settle(planPath(), (p: Plan) => !p.steps.some((s) => s.status === 'verifying'));
      return {
        path: `${planPath()}/steps/${step(plan, (s) => !s.final && s.status === 'pending').seq}/confirm`,
      };
    },
    'POST /api/pulse/plans/:id/finalize': () => ({ path: `${planPath()}/finalize` }),
    'POST /api/pulse/plans/:id/regenerate': async () => {
      await settle(planPath(), ready); // the finalize above, done
      otherPlanId = (
        await call(url, 'POST', `/api/pulse/findings/${otherFinding.id}/resolution-plan`, { token: rw })
      ).body.id;
      await settle(`/api/pulse/plans/${otherPlanId}`, ready);
      return { path: `/api/pulse/plans/${otherPlanId}/regenerate` };
    },
    'POST /api/pulse/plans/:id/steps/:seq/skip': async () => {
      const plan = await settle(`/api/pulse/plans/${otherPlanId}`, ready);
      return {
        path: `/api/pulse/plans/${otherPlanId}/steps/${step(plan, (s) => !s.final && s.status === 'pending').seq}/skip`,
        body: { reason: 'The owner keeps this one until the quarter closes.' },
      };
    },
    // Incidents and triage.
    'POST /api/v1/triage/alerts': () => ({
      path: '/api/v1/triage/alerts',
      body: {
        title: 'NATGatewayErrorPortAllocation',
        severity: 'critical',
        source: 'cloudwatch',
        resource: 'nat-gateway',
        labels: { team: 'platform' },
      },
    }),
    'GET /api/v1/triage/overview': () => ({ path: '/api/v1/triage/overview' }),
    'GET /api/v1/triage/events': () => ({ path: '/api/v1/triage/events?limit=3' }),
    'POST /api/v1/triage/rules': () => ({
      path: '/api/v1/triage/rules',
      body: { name: 'Canary checks never page', kind: 'suppress', match: { source: 'canary' } },
    }),
    'GET /api/v1/triage/rules': () => ({ path: '/api/v1/triage/rules' }),
    'PATCH /api/v1/triage/rules/:id': async () => {
      const rules = (await call(url, 'GET', '/api/v1/triage/rules', { token: rw })).body.rules;
      const own = rules.find((r: { built_in: boolean }) => !r.built_in);
      return {
        path: `/api/v1/triage/rules/${own.id}`,
        body: { match: { source: ['canary', 'synthetics'] } },
      };
    },
    'DELETE /api/v1/triage/rules/:id': async () => {
      const spare = await call(url, 'POST', '/api/v1/triage/rules', {
        token: rw,
        body: {
          name: 'Staging alerts are SEV4',
          kind: 'route',
          action: { open_incident: true, severity: 'SEV4' },
        },
      });
      return { path: `/api/v1/triage/rules/${spare.body.id}` };
    },
    'POST /api/v1/incidents': () => ({
      path: '/api/v1/incidents',
      body: {
        title: 'Checkout latency above 2 s',
        severity: 'SEV2',
        description: 'p99 of POST /checkout above 2 s since 09:10 UTC.',
      },
    }),
    'GET /api/v1/incidents': () => ({ path: '/api/v1/incidents?limit=3' }),
    'GET /api/v1/incidents/:id': async () => {
      incidentId = (await get('/api/v1/incidents?limit=50')).incidents.find(
        (i: { title: string }) => i.title === 'Checkout latency above 2 s',
      ).id;
      return { path: `/api/v1/incidents/${incidentId}` };
    },
    'PATCH /api/v1/incidents/:id': () => ({
      path: `/api/v1/incidents/${incidentId}`,
      body: { status: 'investigating' },
    }),
    'POST /api/v1/incidents/:id/timeline': () => ({
      path: `/api/v1/incidents/${incidentId}/timeline`,
      body: { body: 'Rolled back the 09:05 deploy of checkout; watching p99.' },
    }),
    'GET /api/v1/incidents/:id/timeline': () => ({ path: `/api/v1/incidents/${incidentId}/timeline` }),
    'POST /api/v1/incidents/:id/war-room': () => ({ path: `/api/v1/incidents/${incidentId}/war-room` }),
    'POST /api/v1/incidents/:id/agent-investigate': () => ({
      path: `/api/v1/incidents/${incidentId}/agent-investigate`,
    }),
    'GET /auth/session': () => ({ path: '/auth/session', auth: 'session' }),
    'POST /auth/login': () => ({
      path: '/auth/login',
      auth: 'none',
      body: { email: member.user.email, password: member.password },
    }),
    'DELETE /api/v1/sessions/:id': () => ({ path: '/api/v1/sessions/triage-monday' }),
    'POST /auth/logout': () => ({ path: '/auth/logout', auth: 'session' }),
  };

  const routes = allRoutes().filter(
    (r) => !r.internal && r.auth !== 'page' && r.path !== '/api/v1/openapi.json',
  );
  const keyOf = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
  // Recipes run in their own order (create before read, delete and sign-out last).
  const ordered = Object.keys(recipes).filter((k) => routes.some((r) => keyOf(r) === k));
  for (const key of ordered) {
    const route = routes.find((r) => keyOf(r) === key)!;
    const recipe = await recipes[key]!();
    const headers = recipe.auth === 'session' ? session : {};
    const token = recipe.auth === undefined || recipe.auth === 'token' ? rw : undefined;
    const res = await call(url, route.method, recipe.path, { token, headers, body: recipe.body });
    if (res.status >= 400) {
      console.warn(`${key}: ${res.status} ${res.text.slice(0, 300)} (no example recorded)`);
      continue;
    }
    examples[key] = {
      request: recipe.body === undefined ? undefined : trimExample(recipe.body),
      status: res.status,
      response: res.body === undefined ? undefined : trimExample(res.body, SECRET),
    };
  }
  // The two event streams: their first frames as text.
  const streamed = await readSse(
    `${url}/api/v1/stream?${new URLSearchParams({ prompt: 'How much could we save on compute?', session_id: 'stream-example' })}`,
    { token: rw },
  );
  const frames = (events: typeof streamed.events) =>
    events
      .map((e) => `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(trimExample(e.data))}\n\n`)
      .join('');
  examples['GET /api/v1/stream'] = { status: 200, stream: frames(streamed.events.slice(0, 6)) };
  const last = streamed.events.length;
  const attached = await readSse(
    `${url}/api/v1/stream/attach?session_id=stream-example&after_seq=${Math.max(0, last - 2)}`,
    { token: rw },
  );
  examples['GET /api/v1/stream/attach'] = { status: 200, stream: frames(attached.events) };
  // The incident's live timeline: the stream stays open, so read what it replays, then leave.
  const timeline = new AbortController();
  const res = await fetch(`${url}/api/v1/incidents/${incidentId}/timeline/stream`, {
    headers: { authorization: `Bearer ${rw}`, accept: 'text/event-stream' },
    signal: timeline.signal,
  });
  let text = '';
  const reader = res.body!.getReader();
  const count = (await get(`/api/v1/incidents/${incidentId}/timeline`)).events.length;
  while ((text.match(/^id: /gm) ?? []).length < count)
    text += new TextDecoder().decode((await reader.read()).value);
  timeline.abort();
  examples['GET /api/v1/incidents/:id/timeline/stream'] = {
    status: res.status,
    stream: text
      .split('\n\n')
      .filter((f) => f.startsWith('id: '))
      .join('\n\n')
      .concat('\n\n'),
  };

  const missing = routes.map(keyOf).filter((k) => !examples[k]);
  if (missing.length) console.warn(`no recipe, so no example, for: ${missing.join(', ')}`);
  const sorted = Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(EXAMPLES_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
  console.warn(
    `wrote ${Object.keys(sorted).length} examples to ${EXAMPLES_FILE.pathname}; now run npm run openapi`,
  );
} finally {
  await worker.close();
  await api.close();
  await t.close();
}
process.exit(0); // pooled connections of the in-process services would otherwise hold the process open
