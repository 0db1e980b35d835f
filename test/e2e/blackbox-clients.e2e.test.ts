import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenantWithUser,
  loginOverHttp,
  readSse,
  runCli,
  script,
  type TestContext,
  type TestMember,
} from '../support/index';
import { REPO_ROOT, freePort } from '../support/processes';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of issue 17 (the `opsi` CLI, the SDK, GET /docs) from the contract alone:
// docs/cli.md (commands, options, exit statuses), api-v1.md (endpoint tables) and the issue text.
// Real API and worker processes, a `small` demo, HTTP and the CLI as a user runs it.

let t: TestContext;
let svc: SplitServices;
let base = '';
let a: TestMember;
let tokA = ''; // read_write, minted through a browser session over HTTP
let tokAId = '';
const RISKS = ['low', 'medium', 'high', 'critical'];

const cliEnv = () => ({
  OPSI_URL: base,
  OPSI_TOKEN: tokA,
  OPSI_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'opsi-bb-')),
});
const get = (path: string, token = tokA) => call(base, 'GET', path, { token });
const ids = (rows: Array<{ id: unknown }>) => rows.map((r) => String(r.id)).sort();

const admin = (args: string[]) => svc.admin(args);

async function mintOverHttp(member: TestMember, scope: 'read' | 'read_write', name: string) {
  const login = await loginOverHttp(base, member.user.email, member.password);
  const res = await call(base, 'POST', '/api/v1/tokens', {
    headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
    body: { name, scope, expires_in_days: 30 },
  });
  expect(res.status, res.text).toBe(201);
  return { token: res.body.token as string, id: res.body.id as string };
}

beforeAll(async () => {
  svc = await startSplitServices({ env: { AGENT_ENGINE: 'scripted' } });
  ({ t, base } = svc);
  a = await createTenantWithUser(t, { tier: 'team' });
  const minted = await mintOverHttp(a, 'read_write', 'bb-clients');
  tokA = minted.token;
  tokAId = minted.id;
  await admin(['env', 'connect', '--tenant', a.tenant.slug, '--demo', '--size', 'small', '--seed', '7']);
  await admin(['scan', '--tenant', a.tenant.slug, '--wait']);
}, 600_000);

afterAll(async () => {
  await svc?.stop();
});

describe('clients: the opsi command line', () => {
  it('opsi --help exits 0 and names the commands', async () => {
    const r = await runCli(['--help']);
    expect(r.code, r.stderr).toBe(0);
    for (const c of ['login', 'ask', 'findings', 'finding', 'rerun', 'plan-review', 'report', 'tokens']) {
      expect(r.stdout + r.stderr).toContain(c);
    }
  });

  it('an unknown command exits non-zero (2, usage, per docs/cli.md)', async () => {
    const r = await runCli(['no-such-command'], cliEnv());
    expect(r.code).not.toBe(0);
    expect(r.code).toBe(2);
  });

  it('opsi findings --json prints the same ids as GET /api/v1/pulse/findings', async () => {
    const api = await get('/api/v1/pulse/findings');
    expect(api.status).toBe(200);
    expect(api.body.findings.length).toBeGreaterThan(0);
    const r = await runCli(['findings', '--json'], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(ids(r.json.findings)).toEqual(ids(api.body.findings));
  });

  it('opsi findings --severity high --json equals the API with severity=high', async () => {
    const api = await get('/api/v1/pulse/findings?severity=high');
    expect(api.status).toBe(200);
    const r = await runCli(['findings', '--severity', 'high', '--json'], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(ids(r.json.findings)).toEqual(ids(api.body.findings));
  });

  it('opsi findings (human) exits 0 and lists the same ids', async () => {
    const api = await get('/api/v1/pulse/findings');
    const r = await runCli(['findings'], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    for (const f of api.body.findings) expect(r.stdout, `id ${f.id}`).toContain(String(f.id));
  });

  async function findingWithRerunnable() {
    const list = await get('/api/v1/pulse/findings');
    for (const f of list.body.findings) {
      const audit = await get(`/api/pulse/findings/${f.id}/audit`);
      if (audit.status !== 200) continue;
      const steps: any[] = audit.body.steps ?? [];
      const step = steps.find((s) => s.rerunnable === true);
      if (step) return { id: String(f.id), steps, step };
    }
    return undefined;
  }

  it('opsi finding <id> shows its evidence trail (audit steps), human and --json', async () => {
    const found = await findingWithRerunnable();
    expect(found, 'a finding with audit steps in the demo').toBeDefined();
    const { id, steps } = found!;
    const j = await runCli(['finding', id, '--json'], cliEnv());
    expect(j.code, j.stderr).toBe(0);
    expect(JSON.stringify(j.json)).toContain(id);
    const text = JSON.stringify(j.json);
    for (const s of steps)
      expect(text, `step ${s.seq}`).toContain(JSON.stringify(String(s.query_sql ?? s.title)).slice(1, -1));
    const h = await runCli(['finding', id], cliEnv());
    expect(h.code, h.stderr).toBe(0);
    for (const s of steps) {
      const label = String(s.title ?? s.tool_name);
      expect(h.stdout, `step ${s.seq} ${label}`).toContain(label);
    }
  });

  it('opsi finding <unknown id> exits 5 (404)', async () => {
    const r = await runCli(['finding', '00000000-0000-4000-8000-000000000000'], cliEnv());
    expect(r.code).toBe(5);
  });

  it('opsi rerun <id> <seq> re-runs a rerunnable step (exit 0); a non-rerunnable one exits 6', async () => {
    const found = await findingWithRerunnable();
    expect(found).toBeDefined();
    const r = await runCli(['rerun', found!.id, String(found!.step.seq), '--json'], cliEnv());
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json).toBeDefined();
    expect(r.json.error).toBeUndefined();
    const other = found!.steps.find((s) => s.rerunnable === false);
    if (other) {
      const api = await call(base, 'POST', `/api/pulse/findings/${found!.id}/audit/${other.seq}/run`, {
        token: tokA,
      });
      expect(api.status).toBe(409);
      const n = await runCli(['rerun', found!.id, String(other.seq)], cliEnv());
      expect(n.code).toBe(6);
    }
  });

  let askSession = '';
  it('opsi ask --json completes with the reply and each event once, in order, equal to the service replay', async () => {
    const prompt = script([
      { delta: 'Hello ' },
      { tool: 'lookup', input: { q: 1 }, output: '3 rows' },
      { deltas: 3 },
      { delta: 'world' },
    ]);
    const r = await runCli(['ask', prompt, '--session', 'bb-ask', '--json'], cliEnv());
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = r.json;
    for (const k of ['session_id', 'run_id', 'status', 'reply', 'detail', 'reconnects', 'events']) {
      expect(out, `field ${k}`).toHaveProperty(k);
    }
    expect(out.reply.startsWith('Hello ')).toBe(true);
    expect(out.reply.endsWith('world')).toBe(true);
    askSession = out.session_id;
    const replay = await readSse(
      `${base}/api/v1/stream/attach?session_id=${encodeURIComponent(out.session_id)}&after_seq=0`,
      { token: tokA },
    );
    expect(replay.status).toBe(200);
    const evs: any[] = out.events;
    expect(evs.length).toBe(replay.events.length);
    const seqOf = (e: any) => Number(e.seq ?? e.id);
    const cliSeqs = evs.map(seqOf);
    expect(new Set(cliSeqs).size).toBe(cliSeqs.length);
    expect([...cliSeqs].sort((x, y) => x - y)).toEqual(cliSeqs);
    expect(cliSeqs).toEqual(replay.events.map((e) => e.id));
  });

  it('opsi ask (human) prints the completed answer and exits 0', async () => {
    const r = await runCli(['ask', script([{ delta: 'plain ' }, { delta: 'answer' }])], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('plain answer');
  });

  it('opsi ask of a failing run exits 8', async () => {
    const r = await runCli(['ask', script([{ delta: 'x' }, { fail: 'boom' }])], cliEnv());
    expect(r.code).toBe(8);
  });

  it('opsi sessions --json lists the same ids as GET /api/v1/sessions, including the ask session', async () => {
    const api = await get('/api/v1/sessions');
    expect(api.status).toBe(200);
    const r = await runCli(['sessions', '--json'], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(ids(r.json.sessions)).toEqual(ids(api.body.sessions));
    if (askSession) expect(JSON.stringify(r.json)).toContain(askSession);
    const h = await runCli(['sessions'], cliEnv());
    expect(h.code, h.stderr).toBe(0);
  });

  it('opsi tokens --json lists the same ids as GET /api/v1/tokens and never a secret', async () => {
    const api = await get('/api/v1/tokens');
    expect(api.status).toBe(200);
    const r = await runCli(['tokens', '--json'], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(ids(r.json.tokens)).toEqual(ids(api.body.tokens));
    expect(ids(r.json.tokens)).toContain(tokAId);
    expect(r.stdout).not.toContain(tokA);
    const h = await runCli(['tokens'], cliEnv());
    expect(h.code, h.stderr).toBe(0);
    expect(h.stdout).not.toContain(tokA);
  });

  it('opsi incidents --json lists the same ids as GET /api/v1/incidents', async () => {
    const created = await call(base, 'POST', '/api/v1/incidents', {
      token: tokA,
      body: { title: 'bb clients' },
    });
    const api = await get('/api/v1/incidents');
    const r = await runCli(['incidents', '--json'], cliEnv());
    console.info(`incidents: API ${api.status} (create ${created.status}), CLI exit ${r.code}`);
    if (api.status === 404) {
      expect(r.code).toBe(5);
      return;
    }
    expect(created.status).toBe(201);
    expect(api.status).toBe(200);
    expect(r.code, r.stderr).toBe(0);
    expect(ids(r.json.incidents)).toEqual(ids(api.body.incidents));
    const h = await runCli(['incidents'], cliEnv());
    expect(h.code, h.stderr).toBe(0);
    expect(h.stdout).toContain(String(created.body.id));
  });

  it('opsi report follows GET /api/v1/reports/morning/latest (200 → 0 with JSON, 404 → 5)', async () => {
    const api = await get('/api/v1/reports/morning/latest');
    const r = await runCli(['report', '--json'], cliEnv());
    console.info(`report: API ${api.status}, CLI exit ${r.code}`);
    if (api.status === 200) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toEqual(api.body);
      const h = await runCli(['report'], cliEnv());
      expect(h.code, h.stderr).toBe(0);
    } else {
      expect(api.status).toBe(404);
      expect(r.code).toBe(5);
    }
  });

  it('opsi plan-review <file> --fail-on: 10 at or above the risk, 0 below, same risk as the API', async () => {
    const file = join(REPO_ROOT, 'docs/examples/demo-plan.txt');
    const api = await call(base, 'POST', '/api/v1/plan-review', {
      token: tokA,
      body: { plan: readFileSync(file, 'utf8') },
    });
    expect(api.status, api.text).toBe(200);
    const risk: string = api.body.overall_risk;
    const rank = RISKS.indexOf(risk);
    console.info(`plan-review: overall_risk ${risk}`);
    expect(rank).toBeGreaterThanOrEqual(0);
    const at = await runCli(['plan-review', file, '--fail-on', risk, '--json'], cliEnv());
    expect(at.code, at.stderr).toBe(10);
    expect(at.json?.overall_risk).toBe(risk);
    if (rank > 0) {
      const below = await runCli(['plan-review', file, '--fail-on', RISKS[rank - 1]!], cliEnv());
      expect(below.code, below.stderr).toBe(10);
    }
    if (rank < RISKS.length - 1) {
      const above = await runCli(['plan-review', file, '--fail-on', RISKS[rank + 1]!], cliEnv());
      expect(above.code, above.stderr).toBe(0);
    }
    const never = await runCli(['plan-review', file, '--fail-on', 'never'], cliEnv());
    expect(never.code, never.stderr).toBe(0);
    // from stdin
    const stdin = await runCli(
      ['plan-review', '-', '--fail-on', 'never', '--json'],
      cliEnv(),
      readFileSync(file, 'utf8'),
    );
    expect(stdin.code, stdin.stderr).toBe(0);
    expect(stdin.json?.overall_risk).toBe(risk);
  });

  it('opsi plan-review of a harmless plan: below --fail-on critical exits 0, at its own risk exits 10', async () => {
    const plan = [
      'Terraform will perform the following actions:',
      '',
      '  # null_resource.bb will be created',
      '  + resource "null_resource" "bb" {',
      '      + id = (known after apply)',
      '    }',
      '',
      'Plan: 1 to add, 0 to change, 0 to destroy.',
      '',
    ].join('\n');
    const api = await call(base, 'POST', '/api/v1/plan-review', { token: tokA, body: { plan } });
    expect(api.status, api.text).toBe(200);
    const risk: string = api.body.overall_risk;
    console.info(`plan-review (harmless): overall_risk ${risk}`);
    expect(RISKS.indexOf(risk)).toBeLessThan(RISKS.indexOf('critical'));
    const below = await runCli(['plan-review', '-', '--fail-on', 'critical', '--json'], cliEnv(), plan);
    expect(below.code, below.stdout + below.stderr).toBe(0);
    expect(below.json?.overall_risk).toBe(risk);
    const at = await runCli(['plan-review', '-', '--fail-on', risk], cliEnv(), plan);
    expect(at.code, at.stderr).toBe(10);
  });

  it('opsi plan-review of an empty plan exits 2', async () => {
    const r = await runCli(['plan-review', '-'], cliEnv(), '');
    expect(r.code).toBe(2);
  });

  it('a bad token exits 3 with the API detail (human and --json)', async () => {
    const bad = 'opsi_' + 'x'.repeat(43);
    const api = await get('/api/v1/pulse/findings', bad);
    expect(api.status).toBe(401);
    const detail: string = api.body.detail;
    const e = { ...cliEnv(), OPSI_TOKEN: bad };
    const h = await runCli(['findings'], e);
    expect(h.code).toBe(3);
    expect(h.stdout + h.stderr).toContain(detail);
    const j = await runCli(['findings', '--json'], e);
    expect(j.code).toBe(3);
    expect(j.json?.error).toMatchObject({ status: 401, exit_code: 3 });
    expect(j.json.error.message).toContain(detail);
  });

  it('no token at all exits 3', async () => {
    const r = await runCli(['findings'], {
      OPSI_URL: base,
      OPSI_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'opsi-bb-')),
    });
    expect(r.code).toBe(3);
  });

  it('an unreachable service exits 9', async () => {
    const port = await freePort();
    const r = await runCli(['findings'], { ...cliEnv(), OPSI_URL: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(9);
  });

  it('a read token on the agent exits 4 (403)', async () => {
    const read = await mintOverHttp(a, 'read', 'bb-read');
    const r = await runCli(['ask', script([{ delta: 'x' }])], { ...cliEnv(), OPSI_TOKEN: read.token });
    expect(r.code).toBe(4);
  });

  it('login --token stores config.json 0600 in a 0700 OPSI_CONFIG_DIR; whoami then works from it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'opsi-bb-')), 'cfg');
    const r = await runCli(['login', '--token', tokA], { OPSI_URL: base, OPSI_CONFIG_DIR: dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const file = join(dir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const w = await runCli(['whoami', '--json'], { OPSI_URL: base, OPSI_CONFIG_DIR: dir });
    expect(w.code, w.stderr).toBe(0);
    expect(JSON.stringify(w.json)).toContain(a.user.email);
  });

  it('login --token with a bad token exits 3 and stores nothing usable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsi-bb-'));
    const r = await runCli(['login', '--token', 'opsi_' + 'y'.repeat(43)], {
      OPSI_URL: base,
      OPSI_CONFIG_DIR: dir,
    });
    expect(r.code).toBe(3);
    const w = await runCli(['whoami'], { OPSI_URL: base, OPSI_CONFIG_DIR: dir });
    expect(w.code).toBe(3);
  });

  it('logout revokes the stored token on the service', async () => {
    const extra = await mintOverHttp(a, 'read_write', 'bb-logout');
    const dir = mkdtempSync(join(tmpdir(), 'opsi-bb-'));
    const l = await runCli(['login', '--token', extra.token], { OPSI_URL: base, OPSI_CONFIG_DIR: dir });
    expect(l.code, l.stderr).toBe(0);
    const o = await runCli(['logout'], { OPSI_URL: base, OPSI_CONFIG_DIR: dir });
    expect(o.code, o.stderr).toBe(0);
    expect((await get('/api/v1/me', extra.token)).status).toBe(401);
  });
});

describe('clients: GET /docs and the OpenAPI document', () => {
  it('GET /docs answers 200 HTML whose scripts and styles are all same-origin', async () => {
    const res = await fetch(`${base}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type') ?? '').toMatch(/text\/html/);
    const html = await res.text();
    const refs = [...html.matchAll(/<(script|link|img)\b[^>]*?\b(src|href)\s*=\s*["']([^"']+)["']/gi)].map(
      (m) => m[3]!,
    );
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      // a data: URI is inline content, not a request to any origin
      if (ref.startsWith('data:')) continue;
      const u = new URL(ref, `${base}/docs`);
      expect(u.origin, ref).toBe(new URL(base).origin);
      const asset = await fetch(u);
      expect(asset.status, ref).toBe(200);
    }
    // a Content-Security-Policy is sent
    expect(res.headers.get('content-security-policy')).toBeTruthy();
  });

  it('the served OpenAPI document lists every path of the endpoint tables in api-v1.md', async () => {
    const res = await call(base, 'GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const norm = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
    const documented = new Set<string>();
    for (const [p, ops] of Object.entries(res.body.paths as Record<string, Record<string, unknown>>)) {
      for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${norm(p)}`);
    }
    const spec = readFileSync('/work/shared/spec/api-v1.md', 'utf8');
    const wanted = [...spec.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| (\/[^ |]+) \|/gm)].map(
      (m) => `${m[1]} ${norm(m[2]!)}`,
    );
    const graphLines = [...spec.matchAll(/^\| (\/api\/v1\/[^ |]+) \|/gm)].map((m) => `GET ${norm(m[1]!)}`);
    const all = [...new Set([...wanted, ...graphLines])];
    expect(all.length).toBeGreaterThan(40);
    const missing = all.filter((w) => !documented.has(w));
    expect(missing).toEqual([]);
  });
});
