import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { call, loginOverHttp, readSse, runCli, script } from '../support/index';
import { startCli } from '../support/cli';
import { REPO_ROOT, runAdmin, startService, type ServiceProcess } from '../support/processes';
import { until as pollUntil } from '../support/poll';

// Every `opsi` command against the real service: `npm start`'s process (API, worker and scheduler, the
// scripted agent engine) on a cloned database and real Redis, its demo tenant scanned on first start.
// The command runs as a user runs it (node apps/cli/bin/opsi.js), human and --json output, exit codes.
// `opsi ask` also runs through a TCP proxy that cuts its stream mid-run.

const REDIS_URL = 'redis://127.0.0.1:6379';
const REDIS_PREFIX = `opsi_e2e_${randomBytes(5).toString('hex')}`;
let database: TestDatabase;
let service: ServiceProcess | undefined;
let configDir = '';
let token = '';
let readToken = '';
let findings: Array<{ id: string; severity: string; title: string }> = [];

const base = () => service!.url;
/** The command's environment: a config directory of this file's own, the service's address. */
const env = (extra: Record<string, string> = {}) => ({
  OPSI_CONFIG_DIR: configDir,
  OPSI_URL: base(),
  ...extra,
});
const opsi = (args: string[], extra: Record<string, string> = {}, stdin?: string | Buffer) =>
  runCli(args, env(extra), stdin);

const until = <T>(what: string, probe: () => Promise<T | undefined>, boundMs = 120_000) =>
  pollUntil(what, probe, boundMs, 500);

beforeAll(async () => {
  database = await createTestDatabase();
  configDir = await mkdtemp(join(tmpdir(), 'opsi-cli-e2e-'));
  service = await startService({
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX,
    NODE_ENV: 'test',
    AGENT_ENGINE: 'scripted',
    DEMO_SEED: 'true',
  });
  const login = await loginOverHttp(base(), 'demo@example.com', 'demo-password');
  const mint = async (scope: string) => {
    const res = await call(base(), 'POST', '/api/v1/tokens', {
      body: { name: `cli-e2e-${scope}`, scope },
      headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.token as string;
  };
  token = await mint('read_write');
  readToken = await mint('read');
  await until('the first scan of the demo environment', async () => {
    const res = await call(base(), 'GET', '/api/v1/pulse/overview', { token });
    return res.body?.coverage?.last_scan?.finished_at ? true : undefined;
  });
  findings = (await call(base(), 'GET', '/api/v1/pulse/findings', { token })).body.findings;
  expect(findings.length).toBeGreaterThan(0);
});

afterAll(async () => {
  await service?.stop().catch((e: unknown) => console.error('service stop', e));
  await database?.close().catch((e: unknown) => console.error('database close', e));
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

describe('opsi against the real service', () => {
  it('login --token stores the token after checking it; whoami shows who it is', async () => {
    const bad = await opsi(['login', '--token', `opsi_${'x'.repeat(43)}`]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('HTTP 401');

    const out = await opsi(['login', '--token', token, '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json).toMatchObject({
      url: base(),
      user: { email: 'demo@example.com' },
      tenant: { slug: 'demo' },
      token: { scope: 'read_write' },
      config_path: join(configDir, 'config.json'),
    });
    const human = await opsi(['whoami']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('demo@example.com');
    expect(human.stdout).toContain('tenant demo');
  });

  it('findings: a table, --json equal to the API, filters, and a bad filter is a usage error (2)', async () => {
    const human = await opsi(['findings']);
    expect(human.code, human.stderr).toBe(0);
    const lines = human.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+SEVERITY\s+STATUS\s+DOMAIN\s+SAVINGS\/MO\s+TITLE$/);
    expect(lines).toHaveLength(findings.length + 1);
    for (const f of findings) expect(human.stdout).toContain(f.id);

    const json = await opsi(['findings', '--json']);
    expect(json.code).toBe(0);
    expect(json.json).toEqual((await call(base(), 'GET', '/api/v1/pulse/findings', { token })).body);

    const high = await opsi(['findings', '--severity', 'high', '--domain', 'security', '--json']);
    expect(high.code).toBe(0);
    const api = await call(base(), 'GET', '/api/v1/pulse/findings?severity=high&domain=security', { token });
    expect(high.json).toEqual(api.body);
    for (const f of high.json.findings) expect(f).toMatchObject({ severity: 'high', domain: 'security' });

    const bad = await opsi(['findings', '--severity', 'urgent']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('urgent');
  });

  it('finding <id>: the evidence trail; --json equal to the API; an unknown id is 5', async () => {
    const id = findings[0]!.id;
    const api = await call(base(), 'GET', `/api/v1/pulse/findings/${id}`, { token });
    const human = await opsi(['finding', id]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(api.body.title);
    expect(human.stdout).toContain('Evidence trail');
    for (const step of api.body.audit.steps) expect(human.stdout).toContain(step.title);
    const json = await opsi(['finding', id, '--json']);
    expect(json.json).toEqual(api.body);

    const missing = await opsi(['finding', randomUUID(), '--json']);
    expect(missing.code).toBe(5);
    expect(missing.json.error).toMatchObject({ status: 404, exit_code: 5 });
  });

  it('rerun <finding> <seq>: a live re-run of a rerunnable step; a step that is not is refused (6)', async () => {
    let target: { finding: string; seq: number } | undefined;
    let notRerunnable: { finding: string; seq: number } | undefined;
    for (const f of findings) {
      const detail = await call(base(), 'GET', `/api/v1/pulse/findings/${f.id}`, { token });
      for (const step of detail.body.audit.steps) {
        if (step.rerunnable) target ??= { finding: f.id, seq: step.seq };
        else notRerunnable ??= { finding: f.id, seq: step.seq };
      }
      if (target && notRerunnable) break;
    }
    expect(target).toBeDefined();
    const json = await opsi(['rerun', target!.finding, String(target!.seq), '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toMatchObject({
      seq: target!.seq,
      row_count: expect.any(Number),
      rows: expect.any(Array),
    });
    const human = await opsi(['rerun', target!.finding, String(target!.seq)]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`Step ${target!.seq} re-run: ${json.json.row_count} rows`);
    if (notRerunnable) {
      const refused = await opsi(['rerun', notRerunnable.finding, String(notRerunnable.seq)]);
      expect(refused.code).toBe(6);
      expect(refused.stderr).toContain('HTTP 409');
    }
  });

  it('ask: the answer, the tool call, the session; --json has every event once; a read token is 4', async () => {
    const prompt = script([
      { delta: 'The answer ' },
      { tool: 'list_findings', input: { limit: 3 }, output: 'three' },
      { delta: 'is 42.' },
    ]);
    const json = await opsi(['ask', prompt, '--session', 'cli-e2e', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toMatchObject({
      session_id: 'cli-e2e',
      status: 'completed',
      reply: 'The answer is 42.',
      reconnects: 0,
    });
    expect(json.json.events.map((e: { seq: number }) => e.seq)).toEqual(
      json.json.events.map((_: unknown, i: number) => i + 1),
    );
    expect(json.json.events.map((e: { kind: string }) => e.kind)).toEqual([
      'run.started',
      'message.delta',
      'tool.started',
      'tool.finished',
      'message.delta',
      'message.completed',
      'run.completed',
    ]);

    const human = await opsi(['ask', 'hello', 'there', '--session', 'cli-e2e']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toBe('echo: hello there\n');
    expect(human.stderr).toContain('session cli-e2e');

    const failed = await opsi(['ask', script([{ fail: 'the model is down' }]), '--session', 'cli-e2e']);
    expect(failed.code).toBe(8);
    expect(failed.stderr).toContain('the model is down');

    const refused = await opsi(['ask', 'hi'], { OPSI_TOKEN: readToken });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('HTTP 403');
    expect((await opsi(['ask'])).code).toBe(2);
  });

  it('sessions and history', async () => {
    const json = await opsi(['sessions', '--json']);
    expect(json.code).toBe(0);
    expect(json.json.sessions.map((s: { id: string }) => s.id)).toContain('cli-e2e');
    const human = await opsi(['sessions']);
    expect(human.stdout).toMatch(/^ID\s+UPDATED\s+NAME/);
    expect(human.stdout).toContain('cli-e2e');
    const history = await opsi(['history', 'cli-e2e', '--json']);
    expect(history.json.messages.map((m: { content: string }) => m.content)).toContain('echo: hello there');
    expect((await opsi(['history', 'cli-e2e'])).stdout).toContain('echo: hello there');
    expect((await opsi(['history', 'no-such-session'])).code).toBe(5);
  });

  it('tokens: the list and revoke; a read token may list but not revoke (4)', async () => {
    const json = await opsi(['tokens', '--json']);
    expect(json.code).toBe(0);
    const readMeta = json.json.tokens.find((t: { name: string }) => t.name === 'cli-e2e-read');
    expect(readMeta).toMatchObject({ scope: 'read', revoked_at: null });
    const human = await opsi(['tokens']);
    expect(human.stdout).toMatch(/^ID\s+SCOPE\s+TOKEN/);
    expect(human.stdout).toContain('cli-e2e-read');

    const notAllowed = await opsi(['tokens', 'revoke', readMeta.id], { OPSI_TOKEN: readToken });
    expect(notAllowed.code).toBe(4);
    const revoked = await opsi(['tokens', 'revoke', readMeta.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('revoked');
    expect((await call(base(), 'GET', '/api/v1/me', { token: readToken })).status).toBe(401);
    const after = await opsi(['whoami'], { OPSI_TOKEN: readToken });
    expect(after.code).toBe(3);
    expect((await opsi(['tokens', 'revoke', randomUUID()])).code).toBe(5);
  });

  it('an unreachable service is exit status 9, a bad address 2', async () => {
    const down = await opsi(['findings', '--json'], { OPSI_URL: 'http://127.0.0.1:9', OPSI_TOKEN: token });
    expect(down.code).toBe(9);
    expect(down.json.error.message).toContain('cannot reach');
    expect((await opsi(['findings', '--url', 'ftp://example'])).code).toBe(2);
  });
});

/**
 * A TCP proxy in front of the service that cuts the first /api/v1/stream response after it carried
 * `cutAfterEvents` events; re-attachments pass untouched. Records each request line it forwarded.
 */
async function cuttingProxy(target: URL, cutAfterEvents: number) {
  const requests: string[] = [];
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    let request = '';
    let seen = '';
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (/^(GET|POST|PATCH|DELETE|PUT) /.test(text)) {
        request = text.slice(0, text.indexOf('\r\n'));
        requests.push(request);
        seen = '';
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      if (cuts > 0 || !request.startsWith('GET /api/v1/stream?')) return;
      seen += chunk.toString('utf8');
      if ((seen.match(/^id: /gm) ?? []).length >= cutAfterEvents) {
        cuts += 1;
        client.destroy();
        upstream.destroy();
      }
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    cuts: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('opsi ask with the connection cut mid-stream', () => {
  const steps = [
    { delta: 'Checked: ' },
    { tool: 'list_findings', input: { limit: 5 }, output: 'five findings' },
    { deltas: 5, text: 'part' },
    { sleep: 1500 },
    { deltas: 5, text: 'more' },
    { sleep: 300 },
    { delta: 'done.' },
  ];
  const reply = `Checked: ${[1, 2, 3, 4, 5].map((i) => `part ${i} `).join('')}${[1, 2, 3, 4, 5].map((i) => `more ${i} `).join('')}done.`;

  it('--json: the complete run, each event exactly once and in order, as the service stored it', async () => {
    const proxy = await cuttingProxy(new URL(base()), 6);
    try {
      const out = await opsi(['ask', script(steps), '--session', 'cut-json', '--json'], {
        OPSI_URL: proxy.url,
        OPSI_TOKEN: token,
      });
      expect(out.code, out.stderr).toBe(0);
      expect(proxy.cuts()).toBe(1);
      expect(
        proxy.requests.filter((r) => r.startsWith('GET /api/v1/stream/attach?')).length,
      ).toBeGreaterThanOrEqual(1);
      expect(out.json.reconnects).toBeGreaterThanOrEqual(1);
      expect(out.json.reply).toBe(reply);
      const seqs = out.json.events.map((e: { seq: number }) => e.seq);
      expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
      // The service's own record of the run, replayed from the start: the same events, byte for byte.
      const stored = await readSse(`${base()}/api/v1/stream/attach?session_id=cut-json&after_seq=0`, {
        token,
      });
      expect(out.json.events).toEqual(stored.events.map((e) => e.data));
      expect(out.json.events.at(-1).kind).toBe('run.completed');
    } finally {
      await proxy.close();
    }
  });

  it('human output: the answer once, the tool call once, and a note that it re-attached', async () => {
    const proxy = await cuttingProxy(new URL(base()), 6);
    try {
      const out = await opsi(['ask', script(steps), '--session', 'cut-human'], {
        OPSI_URL: proxy.url,
        OPSI_TOKEN: token,
      });
      expect(out.code, out.stderr).toBe(0);
      expect(proxy.cuts()).toBe(1);
      expect(out.stdout).toBe(`↳ list_findings {"limit":5}\n  ✓ list_findings five findings\n${reply}\n`);
      expect(out.stderr).toMatch(/connection lost; re-attaching after event \d+/);
      expect(out.stderr).toMatch(/re-attached 1×/);
    } finally {
      await proxy.close();
    }
  });
});

describe('opsi plan: an unattached volume through to resolved', () => {
  beforeAll(async () => {
    expect((await opsi(['login', '--token', token])).code).toBe(0);
  });

  it('show, a premature --finalize (6), demo exec, --verify, --confirm, --skip, --finalize, --regenerate (6)', async () => {
    const finding = (
      await call(base(), 'GET', '/api/v1/pulse/findings?domain=finops', { token })
    ).body.findings.find((f: { check_id: string }) => f.check_id === 'finops.ebs_unattached');
    expect(finding).toBeDefined();

    const shown = await opsi(['plan', finding.id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const plan = shown.json;
    expect(plan).toMatchObject({ finding_id: finding.id, status: 'ready', stale: false });
    expect(plan).toEqual((await call(base(), 'GET', `/api/pulse/plans/${plan.id}`, { token })).body);
    const human = await opsi(['plan', finding.id]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`Resolution plan ${plan.id}`);
    for (const step of plan.steps) expect(human.stdout).toContain(`${step.seq}. ${step.title}`);

    const fix = plan.steps.find((s: { fix_command: unknown }) => s.fix_command);
    const manual = plan.steps.filter((s: { final: boolean; seq: number }) => !s.final && s.seq !== fix.seq);
    expect(fix.verification).not.toBeNull();
    // Finalizing before the other steps are done is the API's 409: exit status 6.
    const early = await opsi(['plan', finding.id, '--finalize']);
    expect(early.code).toBe(6);
    expect(early.stderr).toContain('HTTP 409');
    expect((await opsi(['plan', finding.id, '--skip', String(fix.seq)])).code).toBe(2); // no --reason
    expect((await opsi(['plan', finding.id, '--confirm', '99'])).code).toBe(2);

    const applied = await runAdmin(['demo', 'exec', '--tenant', 'demo', fix.fix_command.command], {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX,
      NODE_ENV: 'test',
    });
    expect(applied.code, applied.stderr).toBe(0);
    const verified = await opsi(['plan', finding.id, '--verify', String(fix.seq), '--json']);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json.steps[fix.seq - 1]).toMatchObject({
      status: 'verified',
      last_check: { outcome: 'passed' },
    });
    for (const [i, step] of manual.entries()) {
      const out =
        i === 0
          ? await opsi(['plan', finding.id, '--confirm', String(step.seq)])
          : await opsi(['plan', finding.id, '--skip', String(step.seq), '--reason', 'not needed here']);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain(`${step.seq}. ${step.title} ${i === 0 ? 'confirmed' : 'skipped'}`);
    }
    const finalized = await opsi(['plan', finding.id, '--finalize']);
    expect(finalized.code, finalized.stderr).toBe(0);
    expect(finalized.stdout).toMatch(/^Final check: resolved /);
    const after = (await call(base(), 'GET', `/api/pulse/plans/${plan.id}`, { token })).body;
    expect(after).toMatchObject({ status: 'resolved', final_check: { outcome: 'resolved' } });
    const again = await opsi(['plan', finding.id, '--json']);
    expect(again.code).toBe(0);
    expect(again.json.status).toBe('resolved');
    // A resolved plan cannot be drafted again: 409, exit status 6.
    expect((await opsi(['plan', finding.id, '--regenerate'])).code).toBe(6);
  }, 180_000);
});

describe('opsi incidents and incident --follow', () => {
  beforeAll(async () => {
    expect((await opsi(['login', '--token', token])).code).toBe(0);
  });

  it('incidents: a table, --json equal to the API, a bad filter is a usage error', async () => {
    const created = await call(base(), 'POST', '/api/v1/incidents', {
      token,
      body: { title: 'CLI e2e: checkout latency', severity: 'SEV2' },
    });
    expect(created.status, created.text).toBe(201);
    const api = await call(base(), 'GET', '/api/v1/incidents', { token });
    const json = await opsi(['incidents', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toEqual(api.body);
    const human = await opsi(['incidents']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ID\s+SEVERITY\s+STATUS\s+OPENED\s+TITLE/);
    for (const i of api.body.incidents) expect(human.stdout).toContain(i.id);
    const sev2 = await opsi(['incidents', '--severity', 'SEV2', '--json']);
    expect(sev2.json.incidents.map((i: { id: string }) => i.id)).toContain(created.body.id);
    for (const i of sev2.json.incidents) expect(i.severity).toBe('SEV2');
    const bad = await opsi(['incidents', '--status', 'burning']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('HTTP 400');
    expect((await opsi(['incident', randomUUID()])).code).toBe(5);
  });

  it('incident <id> --follow: the timeline, then a note added while it follows, then resolved', async () => {
    const created = await call(base(), 'POST', '/api/v1/incidents', {
      token,
      body: { title: 'CLI e2e: follow me', severity: 'SEV3' },
    });
    const id = created.body.id as string;
    const shown = await opsi(['incident', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json.incident).toMatchObject({ id, title: 'CLI e2e: follow me' });
    expect(shown.json.timeline.map((e: { kind: string }) => e.kind)).toEqual(['created']);

    const follow = startCli(['incident', id, '--follow', '--json'], env({ OPSI_TOKEN: token }));
    const lines = () =>
      follow
        .stdout()
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    // (A note written before the stream opened would be replayed from after_id: no race either way.)
    await until('the follower to print the timeline', async () =>
      lines().some((l) => l.event?.kind === 'created') ? true : undefined,
    );
    const note = await call(base(), 'POST', `/api/v1/incidents/${id}/timeline`, {
      token,
      body: { body: 'rolled back the deploy' },
    });
    expect(note.status, note.text).toBe(201);
    const seen = await until(
      'the note on the follower',
      async () => lines().find((l) => l.event?.id === note.body.id),
      30_000,
    );
    expect(seen.event).toEqual(note.body);
    // Resolving the incident ends the follow by itself.
    const patched = await call(base(), 'PATCH', `/api/v1/incidents/${id}`, {
      token,
      body: { status: 'resolved' },
    });
    expect(patched.status).toBe(200);
    const done = await follow.done;
    expect(done.code, done.stderr).toBe(0);
    const events = lines()
      .filter((l) => l.event)
      .map((l) => l.event);
    expect(events.map((e: { kind: string }) => e.kind)).toEqual(['created', 'note', 'status_changed']);
    expect(new Set(events.map((e: { id: number }) => e.id)).size).toBe(events.length);
  });

  it('incident <id> --follow stops on Ctrl-C (SIGINT) with exit status 130', async () => {
    const created = await call(base(), 'POST', '/api/v1/incidents', {
      token,
      body: { title: 'CLI e2e: interrupt me' },
    });
    const follow = startCli(['incident', created.body.id, '--follow'], env({ OPSI_TOKEN: token }));
    await until('the follower to start', async () =>
      follow.stderr().includes('following') ? true : undefined,
    );
    const note = await call(base(), 'POST', `/api/v1/incidents/${created.body.id}/timeline`, {
      token,
      body: { body: 'paged the database team' },
    });
    expect(note.status).toBe(201);
    await until('the note on the follower', async () =>
      follow.stdout().includes('paged the database team') ? true : undefined,
    );
    follow.child.kill('SIGINT');
    const done = await follow.done;
    expect(done.code).toBe(130);
    expect(done.stdout).toContain('CLI e2e: interrupt me');
  });
});

describe('commands whose endpoints are built on other branches', () => {
  // plan-review and report (and, before they were served, plan and incidents) speak to endpoints of
  // the contract that a service may not serve; until it does, each answers the API's 404 as status 5.
  let served: Set<string>;
  beforeAll(async () => {
    served = new Set(Object.keys((await call(base(), 'GET', '/api/v1/openapi.json')).body.paths));
  });

  it('plan-review reads a file or stdin and refuses an empty plan (2) before calling', async () => {
    const file = join(configDir, 'plan.txt');
    await writeFile(file, '');
    expect((await opsi(['plan-review', file])).code).toBe(2);
    expect((await opsi(['plan-review', '-'], {}, '   ')).code).toBe(2);
    expect((await opsi(['plan-review', join(configDir, 'missing.txt')])).code).toBe(2);
    expect((await opsi(['plan-review', file, '--fail-on', 'extreme'])).code).toBe(2);
  });

  it('plan-review: the demo plan reviewed, exit status by --fail-on, from a file or stdin', async () => {
    const plan = join(REPO_ROOT, 'docs/examples/demo-plan.txt');
    const json = await opsi(['plan-review', plan, '--json', '--fail-on', 'never']);
    expect(json.code, json.stderr).toBe(0);
    const api = await call(base(), 'POST', '/api/v1/plan-review', {
      token,
      body: { plan: await readFile(plan, 'utf8') },
    });
    expect(api.status).toBe(200);
    expect(json.json).toMatchObject({ overall_risk: api.body.overall_risk, read_only: true, failed: false });
    expect(json.json.annotations).toEqual(api.body.annotations);
    const risks = ['low', 'medium', 'high', 'critical'];
    const rank = risks.indexOf(api.body.overall_risk);
    for (const [i, threshold] of risks.entries()) {
      const out = await opsi(['plan-review', plan, '--fail-on', threshold]);
      expect(out.code, threshold).toBe(rank >= i ? 10 : 0);
      expect(out.stdout).toContain(`Overall risk: ${api.body.overall_risk}`);
    }
    const piped = await opsi(
      ['plan-review', '-', '--json', '--fail-on', 'never'],
      {},
      await readFile(plan, 'utf8'),
    );
    expect(piped.json.overall_risk).toBe(api.body.overall_risk);
    expect((await opsi(['plan-review', plan], { OPSI_TOKEN: readToken })).code).toBe(3); // revoked above
  });

  it('plan-review: a UTF-16 LE plan with a BOM (PowerShell `>`), from a file and from stdin', async () => {
    const plan = await readFile(join(REPO_ROOT, 'docs/examples/demo-plan.txt'), 'utf8');
    const file = join(configDir, 'plan-utf16.txt');
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(plan.replace(/\n/g, '\r\n'), 'utf16le'),
    ]);
    await writeFile(file, utf16);
    const api = await call(base(), 'POST', '/api/v1/plan-review', { token, body: { plan } });
    const fromFile = await opsi(['plan-review', file, '--json', '--fail-on', 'never']);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.json.annotations.map((a: { address: string }) => a.address)).toEqual(
      api.body.annotations.map((a: { address: string }) => a.address),
    );
    const piped = await opsi(['plan-review', '-', '--json', '--fail-on', 'never'], {}, utf16);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.json.overall_risk).toBe(api.body.overall_risk);
  });

  it('report: the latest morning report once one is generated; --json equal to the API', async () => {
    const queued = await call(base(), 'POST', '/api/v1/reports/morning', { token });
    expect(queued.status, queued.text).toBe(202);
    const latest = await until('a morning report', async () => {
      const res = await call(base(), 'GET', '/api/v1/reports/morning/latest', { token });
      return res.status === 200 ? res.body : undefined;
    });
    const json = await opsi(['report', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toEqual(latest);
    const human = await opsi(['report']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(latest.headline);
    expect(human.stdout).toMatch(/Findings: \d+ new, \d+ resolved, \d+ regressed/);
  });

  it('each is 5 (not found) while the service does not serve its endpoint', async () => {
    const cases: Array<[string, string[]]> = [
      ['/api/v1/incidents', ['incidents']],
      ['/api/v1/incidents/{id}', ['incident', randomUUID()]],
      ['/api/v1/reports/morning/latest', ['report']],
      ['/api/pulse/findings/{id}/resolution-plan', ['plan', findings[0]!.id]],
    ];
    for (const [path, args] of cases) {
      if (served.has(path)) continue;
      const out = await opsi([...args, '--json']);
      expect(out.code, args.join(' ')).toBe(5);
      expect(out.json.error.status).toBe(404);
    }
    if (!served.has('/api/v1/plan-review')) {
      const out = await opsi(['plan-review', '-'], {}, 'Terraform will perform the following actions:\n');
      expect(out.code).toBe(5);
    }
  });
});
