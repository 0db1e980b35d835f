import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  call,
  createTenantWithUser,
  createTestContext,
  loginOverHttp,
  mintTestToken,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '../support/index';
import { freePort, runAdmin, startService, type ServiceProcess } from '../support/processes';

// Black-box checks of issue 10 (operator commands that finish; 4xx instead of 500) from the contract
// alone: the README's operator commands table, decisions.md, api-v1.md. Split mode: real API, worker
// and scheduler processes on a database and Redis prefix of this file's own; operator commands as
// child processes under a hard bound. Embedded mode: no DATABASE_URL/REDIS_URL, a temp DATA_DIR.

const BOUND_MS = 120_000;
const MISTAKE_BOUND_MS = 60_000;

let t: TestContext;
let env: Record<string, string>;
let api: ServiceProcess;
let scheduler: ServiceProcess;
let worker: ServiceProcess | undefined;
let base = '';
let member: TestMember;
let tokRW = '';
let demoScanId = '';

/** Runs an operator command; asserts it exits by itself with 0 and exactly one JSON object on stdout. */
async function ok(args: string[], e: Record<string, string> = env, boundMs = BOUND_MS) {
  const r = await runAdmin(args, e, { timeoutMs: boundMs });
  const what = `${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr.slice(-2000)}`;
  expect(r.timedOut, `did not exit by itself within ${boundMs} ms: ${what}`).toBe(false);
  expect(r.code, what).toBe(0);
  const parsed = JSON.parse(r.stdout.trim()); // exactly one JSON object, nothing else
  expect(typeof parsed, what).toBe('object');
  expect(Array.isArray(parsed)).toBe(false);
  expect(parsed).not.toHaveProperty('detail');
  return parsed as Record<string, any>;
}

/** A deliberate mistake: exits by itself with 1 and `{detail}`. */
async function mistake(args: string[], e: Record<string, string> = env, boundMs = MISTAKE_BOUND_MS) {
  const r = await runAdmin(args, e, { timeoutMs: boundMs });
  const what = `${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr.slice(-2000)}`;
  expect(r.timedOut, `did not exit by itself within ${boundMs} ms: ${what}`).toBe(false);
  expect(r.code, what).toBe(1);
  const parsed = JSON.parse(r.stdout.trim());
  expect(typeof parsed.detail, what).toBe('string');
  expect(parsed.detail.length).toBeGreaterThan(0);
  return parsed as { detail: string };
}

async function startWorker() {
  const metricsPort = await freePort();
  worker = await startService(
    { ...env, WORKER_METRICS_PORT: String(metricsPort) },
    { entry: 'apps/worker/src/main.ts', readyUrl: `http://127.0.0.1:${metricsPort}/healthz` },
  );
}

async function mintOverHttp(email: string, password: string, scope: 'read' | 'read_write' = 'read_write') {
  const login = await loginOverHttp(base, email, password);
  const res = await call(base, 'POST', '/api/v1/tokens', {
    headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
    body: { name: `bb-${scope}`, scope },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; token: string };
}

async function liveVolumes(tenantId: string, attached: boolean) {
  const res = await sql<{ id: string; native_id: string; deleted_at: Date | null }>`
    select id, native_id, deleted_at from resources
     where tenant_id = ${tenantId} and type = 'aws_ebs_volume' and deleted_at is null
       and (coalesce(jsonb_array_length(attributes->'attachments'), 0) > 0) = ${attached}
     order by native_id`.execute(t.db);
  return res.rows;
}

async function tenantId(slug: string): Promise<string> {
  const res = await sql<{ id: string }>`select id from tenants where slug = ${slug}`.execute(t.db);
  return res.rows[0]!.id;
}

beforeAll(async () => {
  t = await createTestContext();
  env = {
    DATABASE_URL: t.database.url,
    DATABASE_POOL_MAX: '3',
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: t.redisPrefix,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DEMO_SEED: 'false',
  };
  api = await startService(env, { entry: 'apps/api/src/main.ts' });
  base = api.url;
  scheduler = await startService(env, { entry: 'apps/scheduler/src/main.ts', readyUrl: `${base}/readyz` });
  member = await createTenantWithUser(t, { tier: 'team' });
  tokRW = (await mintTestToken(t, member, 'read_write')).token;
}, 300_000);

afterAll(async () => {
  await Promise.all([api, scheduler, worker].filter(Boolean).map((p) => p!.stop()));
  await t?.close();
});

describe('split mode, no worker serving pulse', () => {
  it('`demo` says the scan is queued, adds `follow`, and exits', async () => {
    const out = await ok(['demo']);
    expect(out.tenant?.slug).toBe('demo');
    expect(out.user?.email).toBe('demo@example.com');
    expect(out).toHaveProperty('login');
    expect(out.scan, JSON.stringify(out)).not.toBeNull();
    expect(typeof out.scan.id).toBe('string');
    expect(out.follow).toContain('scan --tenant demo --wait');
    demoScanId = out.scan.id;
  });

  it('`demo` again reuses the queued scan (no second scan queued)', async () => {
    const out = await ok(['demo']);
    expect(out.scan?.id).toBe(demoScanId);
    const scans = await sql<{ n: number }>`select count(*)::int as n from inventory_scans
      where tenant_id = ${await tenantId('demo')}`.execute(t.db);
    expect(scans.rows[0]!.n).toBe(1);
  });

  it('`scan --tenant demo` while its scan is queued reuses it and prints {scan, follow}', async () => {
    const out = await ok(['scan', '--tenant', 'demo']);
    expect(out.scan?.id).toBe(demoScanId);
    expect(typeof out.follow).toBe('string');
  });

  it('`scan --wait` with no worker fails with {detail} after about 10 s, and exits', async () => {
    const started = Date.now();
    await mistake(['scan', '--tenant', 'demo', '--wait'], env, 90_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
  });
});

describe('split mode, with the worker', () => {
  beforeAll(async () => {
    await startWorker();
  }, 180_000);

  it('`scan --tenant demo --wait` exits once done; the findings API then shows findings', async () => {
    const out = await ok(['scan', '--tenant', 'demo', '--wait'], env, 240_000);
    expect(out.scan?.status).toBe('completed');
    // The worker may have taken the queued scan and finished it before this command ran; then a new
    // scan is fine. Either way the queued scan is completed now and was never duplicated while queued.
    if (out.scan?.id !== demoScanId) {
      const q = await sql<{
        status: string;
      }>`select status from inventory_scans where id = ${demoScanId}`.execute(t.db);
      expect(q.rows[0]?.status).toBe('completed');
    }
    const tok = await mintOverHttp('demo@example.com', 'demo-password', 'read');
    const res = await call(base, 'GET', '/api/v1/pulse/findings', { token: tok.token });
    expect(res.status).toBe(200);
    expect(res.body.findings.length).toBeGreaterThan(0);
  }, 300_000);

  it('`demo` once the tenant has a completed scan: scan is null, exits', async () => {
    const out = await ok(['demo']);
    expect(out.scan).toBeNull();
  });

  it('tenant create / update / mistakes', async () => {
    const created = await ok(['tenant', 'create', 'bb-ops-a', '--name', 'BB Ops A', '--tier', 'team']);
    expect(created.tenant).toMatchObject({ slug: 'bb-ops-a', name: 'BB Ops A', tier: 'team' });
    const updated = await ok([
      'tenant',
      'update',
      'bb-ops-a',
      '--name',
      'BB Ops A2',
      '--timezone',
      'Europe/Paris',
    ]);
    expect(updated.tenant).toMatchObject({ slug: 'bb-ops-a', name: 'BB Ops A2' });
    await mistake(['tenant', 'create', 'bb-ops-bad', '--tier', 'platinum']);
    await mistake(['tenant', 'create', 'bb-ops-a']); // slug taken
    await mistake(['tenant', 'update', 'bb-ops-a']); // nothing to change
  }, 300_000);

  it('user create, budget set, token expire, user delete, tenant delete', async () => {
    const u = await ok([
      'user',
      'create',
      '--tenant',
      'bb-ops-a',
      '--email',
      'bb-ops@example.com',
      '--password',
      'correct-horse',
      '--role',
      'admin',
    ]);
    expect(u.user).toMatchObject({ email: 'bb-ops@example.com', role: 'admin' });
    await mistake([
      'user',
      'create',
      '--tenant',
      'bb-ops-a',
      '--email',
      'x@example.com',
      '--password',
      'short',
    ]);

    const b = await ok(['budget', 'set', '--tenant', 'bb-ops-a', '--daily', '5']);
    expect(b.tenant?.slug).toBe('bb-ops-a');

    const tok = await mintOverHttp('bb-ops@example.com', 'correct-horse', 'read');
    expect((await call(base, 'GET', '/api/v1/me', { token: tok.token })).status).toBe(200);
    const e = await ok(['token', 'expire', tok.id]);
    expect(e.token?.id).toBe(tok.id);
    expect((await call(base, 'GET', '/api/v1/me', { token: tok.token })).status).toBe(401);
    await mistake(['token', 'expire', '00000000-0000-4000-8000-000000000000']);

    const tok2 = await mintOverHttp('bb-ops@example.com', 'correct-horse', 'read');
    const d = await ok(['user', 'delete', '--tenant', 'bb-ops-a', '--email', 'bb-ops@example.com']);
    expect(d.user?.email).toBe('bb-ops@example.com');
    expect((await call(base, 'GET', '/api/v1/me', { token: tok2.token })).status).toBe(401);

    const td = await ok(['tenant', 'delete', 'bb-ops-a']);
    expect(td.tenant?.slug).toBe('bb-ops-a');
    await mistake(['tenant', 'delete', 'bb-ops-nonexistent']);
  }, 400_000);

  it('env connect --demo, then two scans started together share one scan id', async () => {
    await ok(['tenant', 'create', 'bb-ops-b', '--tier', 'team']);
    const c = await ok([
      'env',
      'connect',
      '--tenant',
      'bb-ops-b',
      '--demo',
      '--size',
      'small',
      '--seed',
      '3',
    ]);
    expect(c).toHaveProperty('connection');
    const [s1, s2] = await Promise.all([
      ok(['scan', '--tenant', 'bb-ops-b']),
      ok(['scan', '--tenant', 'bb-ops-b']),
    ]);
    expect(s1.scan?.id).toBeTruthy();
    expect(s2.scan?.id).toBe(s1.scan?.id);
    const scans = await sql<{ n: number }>`select count(*)::int as n from inventory_scans
      where tenant_id = ${await tenantId('bb-ops-b')}`.execute(t.db);
    expect(scans.rows[0]!.n).toBe(1);
    const w = await ok(['scan', '--tenant', 'bb-ops-b', '--wait'], env, 240_000);
    expect(w.scan?.status).toBe('completed');
  }, 400_000);

  it('demo exec: a valid fix applies, a refused one exits 1 with {detail}; demo advance; the next scan shows it', async () => {
    const id = await tenantId('demo');
    const free = await liveVolumes(id, false);
    const attached = await liveVolumes(id, true);
    expect(free.length).toBeGreaterThan(0);
    expect(attached.length).toBeGreaterThan(0);
    const applied = await ok([
      'demo',
      'exec',
      '--tenant',
      'demo',
      `aws ec2 delete-volume --volume-id ${free[0]!.native_id}`,
    ]);
    expect(applied).toHaveProperty('applied');
    await mistake([
      'demo',
      'exec',
      '--tenant',
      'demo',
      `aws ec2 delete-volume --volume-id ${attached[0]!.native_id}`,
    ]);
    await mistake(['demo', 'exec', '--tenant', 'demo', 'aws ec2 frobnicate --everything']);
    const adv = await ok(['demo', 'advance', '--tenant', 'demo', '--days', '1']);
    expect(adv).toHaveProperty('environment');
    const s = await ok(['scan', '--tenant', 'demo', '--wait'], env, 240_000);
    expect(s.scan?.status).toBe('completed');
    const after = await sql<{ native_id: string; deleted_at: Date | null }>`
      select native_id, deleted_at from resources where tenant_id = ${id} and native_id in
      (${free[0]!.native_id}, ${attached[0]!.native_id})`.execute(t.db);
    const byId = Object.fromEntries(after.rows.map((r) => [r.native_id, r.deleted_at]));
    expect(byId[free[0]!.native_id], 'deleted volume').not.toBeNull();
    expect(byId[attached[0]!.native_id], 'refused delete changed nothing').toBeNull();
  }, 500_000);

  it('the API, worker and scheduler outlived every command', () => {
    expect(api.child.exitCode).toBeNull();
    expect(scheduler.child.exitCode).toBeNull();
    expect(worker!.child.exitCode).toBeNull();
  });
});

describe('HTTP: NUL characters are 400 naming the field, nothing stored', () => {
  const NUL = '\u0000';

  function expectNamed(res: { status: number; body: any; text: string }, field: RegExp) {
    expect(res.status, res.text).toBe(400);
    expect(typeof res.body?.detail, res.text).toBe('string');
    expect(res.body.detail).toMatch(field);
  }

  it('login email', async () => {
    const res = await call(base, 'POST', '/auth/login', {
      body: { email: `a${NUL}@example.com`, password: member.password },
    });
    expectNamed(res, /email/i);
  });

  it('/ask prompt: 400, no session created', async () => {
    const res = await call(base, 'POST', '/api/v1/ask', {
      token: tokRW,
      body: { prompt: `hello${NUL}world`, session_id: 'bb-nul-ask' },
    });
    expectNamed(res, /prompt/i);
    const list = await call(base, 'GET', '/api/v1/sessions', { token: tokRW });
    expect(list.body.sessions.map((s: any) => s.id)).not.toContain('bb-nul-ask');
  });

  it('session name: 400, no session stored', async () => {
    const before = (await call(base, 'GET', '/api/v1/sessions', { token: tokRW })).body.sessions.length;
    const res = await call(base, 'POST', '/api/v1/sessions', { token: tokRW, body: { name: `x${NUL}y` } });
    expectNamed(res, /name/i);
    const after = (await call(base, 'GET', '/api/v1/sessions', { token: tokRW })).body.sessions.length;
    expect(after).toBe(before);
  });

  it('learning fact and service: 400, nothing stored', async () => {
    const count = async () => {
      const r = await call(base, 'GET', '/api/v1/learnings', { token: tokRW });
      expect(r.status).toBe(200);
      return JSON.stringify(r.body).length;
    };
    const before = await count();
    expectNamed(
      await call(base, 'POST', '/api/v1/learnings', { token: tokRW, body: { fact: `a${NUL}b` } }),
      /fact/i,
    );
    expectNamed(
      await call(base, 'POST', '/api/v1/learnings', {
        token: tokRW,
        body: { fact: 'a fine fact', service: `svc${NUL}` },
      }),
      /service/i,
    );
    expect(await count()).toBe(before);
  });

  it('token name: 400, no token minted', async () => {
    const login = await loginOverHttp(base, member.user.email, member.password);
    const list = async () => (await call(base, 'GET', '/api/v1/tokens', { token: tokRW })).body.tokens.length;
    const before = await list();
    const res = await call(base, 'POST', '/api/v1/tokens', {
      headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
      body: { name: `laptop${NUL}`, scope: 'read' },
    });
    expectNamed(res, /name/i);
    expect(await list()).toBe(before);
  });

  it('query parameters', async () => {
    expectNamed(
      await call(base, 'GET', '/api/v1/pulse/findings?status=open%00', { token: tokRW }),
      /status/i,
    );
    expectNamed(await call(base, 'GET', '/api/v1/graph/search?q=prod%00', { token: tokRW }), /\bq\b/);
    expectNamed(await call(base, 'GET', '/api/v1/history?session_id=a%00b', { token: tokRW }), /session_id/);
  });
});

describe('HTTP: sequence numbers are decimal digits only on /stream/attach', () => {
  const session = 'bb-ops-attach';

  async function attach(query: string, headers: Record<string, string> = {}) {
    const ctrl = new AbortController();
    const res = await fetch(`${base}/api/v1/stream/attach?session_id=${session}${query}`, {
      headers: { authorization: `Bearer ${tokRW}`, ...headers },
      signal: ctrl.signal,
    });
    const status = res.status;
    const text = status === 200 ? '' : await res.text();
    ctrl.abort();
    return { status, text };
  }

  beforeAll(async () => {
    const res = await call(base, 'POST', '/api/v1/ask', {
      token: tokRW,
      body: { prompt: 'hello', session_id: session },
    });
    expect(res.status, res.text).toBe(200);
  }, 200_000);

  it('a decimal Last-Event-ID and after_seq are accepted (200)', async () => {
    expect((await attach('', { 'last-event-id': '2' })).status).toBe(200);
    expect((await attach('&after_seq=16')).status).toBe(200);
  });

  it('Last-Event-ID: 0x2 → 400', async () => {
    const r = await attach('', { 'last-event-id': '0x2' });
    expect(r.status, r.text).toBe(400);
    expect(JSON.parse(r.text).detail).toEqual(expect.any(String));
  });

  it('Last-Event-ID: 1e3 → 400', async () => {
    const r = await attach('', { 'last-event-id': '1e3' });
    expect(r.status, r.text).toBe(400);
  });

  it('after_seq=0x10 → 400', async () => {
    const r = await attach('&after_seq=0x10');
    expect(r.status, r.text).toBe(400);
    expect(JSON.parse(r.text).detail).toMatch(/after_seq/);
  });
});

describe('embedded mode (no DATABASE_URL / REDIS_URL, a temp DATA_DIR)', () => {
  let dir = '';
  let emb: Record<string, string>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bb-ops-'));
    emb = { DATA_DIR: dir, NODE_ENV: 'test', LOG_LEVEL: 'warn', DEMO_SEED: 'false' };
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('tenant create, env connect, scan --wait each exit with their JSON; a mistake exits 1', async () => {
    const c = await ok(['tenant', 'create', 'emb', '--tier', 'team'], emb, 180_000);
    expect(c.tenant?.slug).toBe('emb');
    const e = await ok(['env', 'connect', '--tenant', 'emb', '--demo', '--size', 'small'], emb, 180_000);
    expect(e).toHaveProperty('connection');
    const s = await ok(['scan', '--tenant', 'emb', '--wait'], emb, 300_000);
    expect(s.scan?.status).toBe('completed');
    await mistake(['tenant', 'create', 'emb'], emb, 120_000);
  }, 900_000);
});
