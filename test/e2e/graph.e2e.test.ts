import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, loginOverHttp } from '../support/index';
import { startService, type ServiceProcess } from '../support/processes';

// The graph and the resilience engine the way a user meets them: `npm start` in embedded mode (PGlite and
// the in-process Redis) seeds the demo and queues its first scan; the scan job then queues the resilience
// job; everything is read over HTTP with a token, as a client would.

let dataDir = '';
let service: ServiceProcess | undefined;
let token = '';
const get = (path: string) => call(service!.url, 'GET', path, { token });

async function until<T>(what: string, f: () => Promise<T | undefined | false>, ms = 150_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await f();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'opsi-graph-e2e-'));
  service = await startService({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  const login = await loginOverHttp(service.url, 'demo@example.com', 'demo-password');
  const minted = await call(service.url, 'POST', '/api/v1/tokens', {
    body: { name: 'graph e2e', scope: 'read' },
    headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
  });
  expect(minted.status, minted.text).toBe(201);
  token = minted.body.token;
}, 180_000);

afterAll(async () => {
  await service?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('graph and resilience after the first scan (embedded mode)', () => {
  it('the resilience job follows the scan, and its findings name the seeded AZ and NAT failures', async () => {
    const status = await until('resilience ready', async () => {
      const res = await get('/api/v1/resilience/status');
      expect(res.status, res.text).toBe(200);
      return res.body.status === 'ready' && res.body;
    });
    expect(status.findings).toBeGreaterThan(0);
    const res = await get('/api/v1/resilience/findings?limit=500');
    expect(res.status).toBe(200);
    const scenarios = new Set(res.body.findings.map((f: { scenario: string }) => f.scenario));
    expect(scenarios).toEqual(new Set(['az_loss', 'nat_loss', 'single_instance', 'role_revocation']));
  });

  it('answers summary, search, blast radius, health, risks and drift over HTTP', async () => {
    const summary = await get('/api/v1/graph/summary');
    expect(summary.status).toBe(200);
    expect(summary.body.nodes).toBeGreaterThan(100);
    expect(summary.body.last_scan_at).toEqual(expect.any(String));

    const search = await get('/api/v1/graph/search?q=prod-payments-db');
    expect(search.status).toBe(200);
    const db = search.body.results[0];
    expect(db.name).toBe('prod-payments-db');

    for (const ref of [db.id, encodeURIComponent(db.arn), db.native_id]) {
      const blast = await get(`/api/v1/graph/blast-radius/${ref}?depth=3`);
      expect(blast.status, blast.text).toBe(200);
      expect(blast.body.resource.id).toBe(db.id);
      expect(blast.body.impacted.map((x: { name: string }) => x.name)).toContain('checkout-alb');
    }

    const health = await get('/api/v1/graph/health?status=critical');
    expect(health.status).toBe(200);
    expect(health.body.resources.map((r: { id: string }) => r.id)).toContain(db.id);

    const risks = await get('/api/v1/graph/risks');
    expect(risks.status).toBe(200);
    const toxic = risks.body.risks.find(
      (r: { kind: string; resources: Array<{ id: string }> }) =>
        r.kind === 'toxic_combination' && r.resources[0]!.id === db.id,
    );
    expect(toxic).toBeDefined();

    const drift = await get('/api/v1/graph/drift?days=7');
    expect(drift.status).toBe(200);
    const change = drift.body.changed.find((c: { id: string }) => c.id === db.id);
    expect(change.fields).toContainEqual({ path: 'attributes.backup_retention_period', before: 7, after: 0 });
    expect(change.actor).toMatch(/:user\/bob$/);
  });
});
