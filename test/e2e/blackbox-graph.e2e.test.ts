import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  call,
  createTenantWithUser,
  mintTestToken,
  type TestContext,
  type TestMember,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';
import { until as pollUntil } from '../support/poll';

// Black-box checks of issue 11 (infrastructure graph and resilience) from the contract alone:
// decisions.md "Wave 2 shapes". Real API and worker processes, a `small` demo, HTTP only; facts about
// the demo come from SQL over the inventory tables.

const NODE_KEYS = ['id', 'arn', 'native_id', 'type', 'name', 'account_id', 'region'];
const SEVERITY_RANK: Record<string, number> = { critical: 0, high: 1, medium: 2, low: 3, info: 4 };

let t: TestContext;
let svc: SplitServices;
let base = '';
let a: TestMember; // team, demo seed 7, scanned
let b: TestMember; // team, demo seed 8, scanned (another tenant)
let empty: TestMember; // team, no environment
let free: TestMember; // free tier
let tokA = '';
let tokB = '';
let tokEmpty = '';
let tokFree = '';

interface Row {
  id: string;
  arn: string;
  native_id: string;
  type: string;
  name: string | null;
  availability_zone: string | null;
  attributes: Record<string, any>;
  tags: Record<string, string>;
}

async function live(tenantId: string, where = sql`true`): Promise<Row[]> {
  const res = await sql<Row>`select id, arn, native_id, type, name, availability_zone, attributes, tags
    from resources where tenant_id = ${tenantId} and deleted_at is null and ${where} order by arn`.execute(
    t.db,
  );
  return res.rows;
}

const get = (path: string, token = tokA) => call(base, 'GET', path, { token });

function expectNode(n: any) {
  for (const k of NODE_KEYS) expect(n, `node field ${k}`).toHaveProperty(k);
}

const until = <T>(what: string, probe: () => Promise<T | undefined>, boundMs = 90_000) =>
  pollUntil(what, probe, boundMs, 500);

const admin = (args: string[]) => svc.admin(args);

beforeAll(async () => {
  svc = await startSplitServices();
  ({ t, base } = svc);
  a = await createTenantWithUser(t, { tier: 'team' });
  b = await createTenantWithUser(t, { tier: 'team' });
  empty = await createTenantWithUser(t, { tier: 'team' });
  free = await createTenantWithUser(t, { tier: 'free' });
  tokA = (await mintTestToken(t, a, 'read')).token;
  tokB = (await mintTestToken(t, b, 'read')).token;
  tokEmpty = (await mintTestToken(t, empty, 'read')).token;
  tokFree = (await mintTestToken(t, free, 'read')).token;
  await admin(['env', 'connect', '--tenant', a.tenant.slug, '--demo', '--size', 'small', '--seed', '7']);
  await admin(['env', 'connect', '--tenant', b.tenant.slug, '--demo', '--size', 'small', '--seed', '8']);
  await admin(['scan', '--tenant', a.tenant.slug, '--wait']);
  await admin(['scan', '--tenant', b.tenant.slug, '--wait']);
}, 600_000);

afterAll(async () => {
  await svc?.stop();
});

/** The demo's production database: a live RDS instance tagged as production (prod account). */
async function prodDb(tenantId: string) {
  const dbs = await live(tenantId, sql`type = 'aws_rds_db_instance'`);
  const prod = dbs.filter((d) => /prod/i.test(JSON.stringify(d.tags)) || /^prod/.test(d.name ?? d.native_id));
  expect(prod.length, 'a production database in the demo').toBeGreaterThan(0);
  // the single-AZ one if any (the one the issue talks about), else the first
  return prod.find((d) => d.attributes.multi_az === false) ?? prod[0]!;
}

describe('graph: auth, read tokens, 401', () => {
  const paths = [
    '/api/v1/graph/summary',
    '/api/v1/graph/search?q=prod',
    '/api/v1/graph/health',
    '/api/v1/graph/risks',
    '/api/v1/graph/drift',
    '/api/v1/resilience/status',
    '/api/v1/resilience/findings',
  ];
  it('no token is 401 on every endpoint', async () => {
    const db = await prodDb(a.tenant.id);
    for (const p of [...paths, `/api/v1/graph/blast-radius/${db.id}`]) {
      const res = await call(base, 'GET', p);
      expect(res.status, p).toBe(401);
    }
  });
  it('a read token gets 200 on every endpoint (all GET)', async () => {
    const db = await prodDb(a.tenant.id);
    for (const p of [...paths, `/api/v1/graph/blast-radius/${db.id}`]) {
      const res = await get(p);
      expect(res.status, `${p}: ${res.text}`).toBe(200);
    }
  });
});

describe('graph summary', () => {
  it('counts nodes and by_type as the inventory does; health and last_scan_at present', async () => {
    const res = await get('/api/v1/graph/summary');
    expect(res.status).toBe(200);
    const rows = await live(a.tenant.id);
    expect(res.body.nodes).toBe(rows.length);
    const byType: Record<string, number> = {};
    for (const r of rows) byType[r.type] = (byType[r.type] ?? 0) + 1;
    expect(res.body.by_type).toEqual(byType);
    expect(typeof res.body.edges).toBe('number');
    expect(res.body.edges).toBeGreaterThan(0);
    expect(Object.keys(res.body.health).sort()).toEqual(['at_risk', 'critical', 'degraded', 'healthy']);
    const h = res.body.health;
    expect(h.healthy + h.degraded + h.at_risk + h.critical).toBe(rows.length);
    expect(Number.isNaN(Date.parse(res.body.last_scan_at))).toBe(false);
  });
  it('a tenant without an environment: zeros and last_scan_at null', async () => {
    const res = await get('/api/v1/graph/summary', tokEmpty);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      nodes: 0,
      edges: 0,
      by_type: {},
      health: { healthy: 0, degraded: 0, at_risk: 0, critical: 0 },
      last_scan_at: null,
    });
  });
});

describe('graph search', () => {
  it('matches by id, ARN, native id, name and tag value; results are nodes with open_findings', async () => {
    const db = await prodDb(a.tenant.id);
    const tagged = (await live(a.tenant.id)).find((r) =>
      Object.values(r.tags ?? {}).some((v) => v.length >= 3),
    );
    const tagValue = Object.values(tagged!.tags).find((v) => v.length >= 3)!;
    const cases: [string, string][] = [
      [db.id, db.id],
      [db.arn, db.id],
      [db.native_id, db.id],
      [db.name ?? db.native_id, db.id],
      [tagValue, tagged!.id],
    ];
    for (const [q, want] of cases) {
      const res = await get(`/api/v1/graph/search?q=${encodeURIComponent(q)}&limit=500`);
      expect(res.status, `q=${q}: ${res.text}`).toBe(200);
      expect(Array.isArray(res.body.results)).toBe(true);
      expect(
        res.body.results.map((r: any) => r.id),
        `q=${q}`,
      ).toContain(want);
      for (const r of res.body.results) {
        expectNode(r);
        expect(r).toHaveProperty('open_findings');
      }
    }
  });
  it('type filter keeps only that type; limit bounds the count', async () => {
    const res = await get('/api/v1/graph/search?q=prod&type=aws_rds_db_instance&limit=500');
    expect(res.status).toBe(200);
    expect(res.body.results.length).toBeGreaterThan(0);
    for (const r of res.body.results) expect(r.type).toBe('aws_rds_db_instance');
    const one = await get('/api/v1/graph/search?q=prod&limit=1');
    expect(one.status).toBe(200);
    expect(one.body.results.length).toBe(1);
  });
  it('q missing, empty or over 200 characters is 400; 200 characters is fine', async () => {
    for (const p of [
      '/api/v1/graph/search',
      '/api/v1/graph/search?q=',
      `/api/v1/graph/search?q=${'x'.repeat(201)}`,
    ]) {
      const res = await get(p);
      expect(res.status, p.slice(0, 60)).toBe(400);
    }
    const ok = await get(`/api/v1/graph/search?q=${'x'.repeat(200)}`);
    expect(ok.status).toBe(200);
    expect(ok.body.results).toEqual([]);
  });
  it('limit outside 1..500 or not an integer is 400', async () => {
    for (const l of ['0', '501', '-1', 'abc', '1.5']) {
      const res = await get(`/api/v1/graph/search?q=prod&limit=${l}`);
      expect(res.status, `limit=${l}`).toBe(400);
    }
    expect((await get('/api/v1/graph/search?q=prod&limit=500')).status).toBe(200);
  });
  it('another tenant never sees our resources; a tenant without an environment gets []', async () => {
    const db = await prodDb(a.tenant.id);
    for (const q of [db.id, db.arn]) {
      const res = await get(`/api/v1/graph/search?q=${encodeURIComponent(q)}`, tokB);
      expect(res.status).toBe(200);
      expect(res.body.results.map((r: any) => r.id)).not.toContain(db.id);
    }
    const res = await get('/api/v1/graph/search?q=prod', tokEmpty);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [] });
  });
});

describe('graph blast radius', () => {
  it('accepts the id, the URL-encoded ARN and the native id, naming the same resource', async () => {
    const db = await prodDb(a.tenant.id);
    const answers = [];
    for (const key of [db.id, encodeURIComponent(db.arn), encodeURIComponent(db.native_id)]) {
      const res = await get(`/api/v1/graph/blast-radius/${key}`);
      expect(res.status, `${key}: ${res.text}`).toBe(200);
      expectNode(res.body.resource);
      expect(res.body.resource.id).toBe(db.id);
      expect(res.body.resource.arn).toBe(db.arn);
      expect(res.body.resource.native_id).toBe(db.native_id);
      answers.push(res.body.total);
    }
    expect(new Set(answers).size).toBe(1);
  });
  it("another tenant's resource by id, ARN and native id is 404; an unknown id is 404", async () => {
    const dbB = await prodDb(b.tenant.id);
    for (const key of [dbB.id, encodeURIComponent(dbB.arn)]) {
      const res = await get(`/api/v1/graph/blast-radius/${key}`);
      expect(res.status, key).toBe(404);
    }
    // B's native id: must not name B's resource (404 unless A has a resource of that native id)
    const sameNative = await live(a.tenant.id, sql`native_id = ${dbB.native_id}`);
    const byNative = await get(`/api/v1/graph/blast-radius/${encodeURIComponent(dbB.native_id)}`);
    if (sameNative.length === 0) expect(byNative.status).toBe(404);
    else expect(byNative.body.resource.id).not.toBe(dbB.id);
    // and the other way round
    const dbA = await prodDb(a.tenant.id);
    for (const key of [dbA.id, encodeURIComponent(dbA.arn)]) {
      expect((await get(`/api/v1/graph/blast-radius/${key}`, tokB)).status).toBe(404);
      expect((await get(`/api/v1/graph/blast-radius/${key}`, tokEmpty)).status).toBe(404);
    }
    expect((await get('/api/v1/graph/blast-radius/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await get('/api/v1/graph/blast-radius/i-doesnotexist')).status).toBe(404);
  });
  it('depth outside 1..10 is 400; default 3', async () => {
    const db = await prodDb(a.tenant.id);
    for (const d of ['0', '11', '-1', 'abc', '2.5']) {
      const res = await get(`/api/v1/graph/blast-radius/${db.id}?depth=${d}`);
      expect(res.status, `depth=${d}`).toBe(400);
    }
    const def = await get(`/api/v1/graph/blast-radius/${db.id}`);
    expect(def.body.depth).toBe(3);
    const ten = await get(`/api/v1/graph/blast-radius/${db.id}?depth=10`);
    expect(ten.status).toBe(200);
    expect(ten.body.depth).toBe(10);
  });
  it('of the production database: includes what uses it, with depth, via and path consistent', async () => {
    const db = await prodDb(a.tenant.id);
    // Independently: the security groups of the database, the groups its rules let in, and the
    // live instances in those groups (the app servers that use the database).
    const sgIds = new Set<string>(
      (db.attributes.vpc_security_groups ?? []).map((g: any) => g.vpc_security_group_id ?? g),
    );
    const sgs = await live(a.tenant.id, sql`type = 'aws_ec2_security_group' or type like '%security_group'`);
    const sourceSgs = new Set<string>();
    for (const sg of sgs.filter((s) => sgIds.has(s.native_id))) {
      for (const m of JSON.stringify(sg.attributes).match(/sg-[0-9a-f]{8,17}/g) ?? [])
        if (m !== sg.native_id) sourceSgs.add(m);
    }
    const instances = await live(a.tenant.id, sql`type = 'aws_ec2_instance'`);
    const users = instances.filter((i) =>
      [...sourceSgs].some((s) => JSON.stringify(i.attributes).includes(s)),
    );
    expect(users.length, 'the demo has app instances allowed into the database').toBeGreaterThan(0);

    const res = await get(`/api/v1/graph/blast-radius/${db.id}?depth=10`);
    expect(res.status).toBe(200);
    const impacted: any[] = res.body.impacted;
    const ids = impacted.map((i) => i.id);
    for (const u of users) expect(ids, `instance ${u.native_id} uses the database`).toContain(u.id);
    expect(ids).not.toContain(db.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(res.body.total).toBe(impacted.length);
    const byDepth: Record<string, number> = res.body.by_depth;
    expect(Object.values(byDepth).reduce((s, n) => s + n, 0)).toBe(res.body.total);
    const counted: Record<string, number> = {};
    for (const i of impacted) counted[String(i.depth)] = (counted[String(i.depth)] ?? 0) + 1;
    expect(byDepth).toEqual(counted);
    for (const i of impacted) {
      expectNode(i);
      expect(Number.isInteger(i.depth) && i.depth >= 1 && i.depth <= 10).toBe(true);
      expect(i.path[0]).toBe(db.id);
      expect(i.path[i.path.length - 1]).toBe(i.id);
      expect(i.path.length).toBe(i.depth + 1);
      expect(i.via.length).toBe(i.depth);
      for (const k of i.via) expect(typeof k).toBe('string');
      // every id on the path is the resource or an impacted one at a smaller depth
      for (const [n, p] of i.path.slice(1, -1).entries()) {
        const hop = impacted.find((x) => x.id === p);
        expect(hop, `path hop ${p}`).toBeDefined();
        expect(hop.depth).toBe(n + 1);
      }
    }
    // depth bounds the answer
    const one = await get(`/api/v1/graph/blast-radius/${db.id}?depth=1`);
    for (const i of one.body.impacted) expect(i.depth).toBe(1);
    expect(one.body.total).toBe(byDepth['1'] ?? 0);
  });
});

describe('graph health', () => {
  it('resources are nodes with health and open_findings; totals sum to the nodes', async () => {
    const res = await get('/api/v1/graph/health?limit=500');
    expect(res.status).toBe(200);
    expect(res.body.resources.length).toBeGreaterThan(0);
    expect(res.body.resources.length).toBeLessThanOrEqual(500);
    for (const r of res.body.resources) {
      expectNode(r);
      expect(['healthy', 'degraded', 'at_risk', 'critical']).toContain(r.health);
      expect(Object.keys(r.open_findings).sort()).toEqual(['critical', 'high', 'info', 'low', 'medium']);
    }
    const tot = res.body.totals;
    const nodes = (await live(a.tenant.id)).length;
    expect(tot.healthy + tot.degraded + tot.at_risk + tot.critical).toBe(nodes);
    const summary = await get('/api/v1/graph/summary');
    expect(summary.body.health).toEqual(tot);
  });
  it('a node with an open critical finding is critical; status filters', async () => {
    // independently: live resources named by an open critical finding
    const crit = await sql<{ resource_id: string }>`select distinct r.id as resource_id
      from findings f join finding_resources fr on fr.finding_id = f.id
      join resources r on r.tenant_id = f.tenant_id and r.arn = fr.arn and r.deleted_at is null
      where f.tenant_id = ${a.tenant.id} and f.status = 'open' and f.severity = 'critical'`.execute(t.db);
    const res = await get('/api/v1/graph/health?status=critical&limit=500');
    expect(res.status).toBe(200);
    for (const r of res.body.resources) expect(r.health).toBe('critical');
    const critIds = res.body.resources.map((r: any) => r.id);
    for (const row of crit.rows) expect(critIds).toContain(row.resource_id);
    const critSet = new Set(crit.rows.map((r) => r.resource_id));
    for (const r of res.body.resources)
      if (critSet.has(r.id)) expect(r.open_findings.critical, r.id).toBeGreaterThan(0);
    expect(res.body.resources.length).toBe(Math.min(500, res.body.totals.critical));
  });
  it('health rolls up along dependencies: what depends on an unhealthy node is not healthy', async () => {
    const db = await prodDb(a.tenant.id);
    const all = await get('/api/v1/graph/health?limit=500');
    const nodes = (await live(a.tenant.id)).length;
    expect(nodes).toBeLessThanOrEqual(500);
    const health = new Map<string, string>(all.body.resources.map((r: any) => [r.id, r.health]));
    expect(health.size).toBe(nodes);
    const dbHealth = health.get(db.id);
    expect(dbHealth, 'the production database has open findings').not.toBe('healthy');
    const blast = await get(`/api/v1/graph/blast-radius/${db.id}?depth=1`);
    expect(blast.body.impacted.length).toBeGreaterThan(0);
    for (const i of blast.body.impacted) expect(health.get(i.id), `${i.type} ${i.id}`).not.toBe('healthy');
  });
  it('paging: offset skips, limit bounds', async () => {
    const all = await get('/api/v1/graph/health?limit=10&offset=0');
    const next = await get('/api/v1/graph/health?limit=5&offset=5');
    expect(all.body.resources.length).toBe(10);
    expect(next.body.resources.map((r: any) => r.id)).toEqual(
      all.body.resources.slice(5).map((r: any) => r.id),
    );
  });
  it('bad status, limit or offset is 400', async () => {
    for (const q of ['status=fine', 'limit=0', 'limit=501', 'limit=x', 'offset=-1', 'offset=x']) {
      const res = await get(`/api/v1/graph/health?${q}`);
      expect(res.status, q).toBe(400);
    }
  });
  it('a tenant without an environment: empty and zero totals', async () => {
    const res = await get('/api/v1/graph/health', tokEmpty);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      resources: [],
      totals: { healthy: 0, degraded: 0, at_risk: 0, critical: 0 },
    });
  });
});

describe('graph risks', () => {
  async function risks() {
    const res = await get('/api/v1/graph/risks');
    expect(res.status).toBe(200);
    return res.body.risks as any[];
  }
  const named = (list: any[], id: string) => list.filter((r) => r.resources.some((n: any) => n.id === id));

  it('shape, and most severe first', async () => {
    const list = await risks();
    expect(list.length).toBeGreaterThan(0);
    for (const r of list) {
      for (const k of ['id', 'kind', 'title', 'severity', 'reason', 'resources', 'finding_ids'])
        expect(r, k).toHaveProperty(k);
      expect(['spof', 'toxic_combination']).toContain(r.kind);
      expect(Object.keys(SEVERITY_RANK)).toContain(r.severity);
      expect(r.resources.length).toBeGreaterThan(0);
      r.resources.forEach(expectNode);
      expect(Array.isArray(r.finding_ids)).toBe(true);
    }
    const ranks = list.map((r) => SEVERITY_RANK[r.severity]!);
    expect(ranks).toEqual([...ranks].sort((x, y) => x - y));
  });
  it('every single-AZ database is a spof risk', async () => {
    const dbs = await live(
      a.tenant.id,
      sql`type = 'aws_rds_db_instance' and attributes->>'multi_az' = 'false'
        and coalesce(attributes->>'engine', '') not like 'aurora%'`,
    );
    expect(dbs.length, 'the demo has a single-AZ database').toBeGreaterThan(0);
    const list = await risks();
    for (const d of dbs)
      expect(
        named(list, d.id).filter((r) => r.kind === 'spof').length,
        `single-AZ db ${d.native_id}`,
      ).toBeGreaterThan(0);
  });
  it('every capacity-1 autoscaling group is a spof risk', async () => {
    const groups = await live(
      a.tenant.id,
      sql`type = 'aws_ec2_autoscaling_group' and ((attributes->>'max_size')::int = 1 or (attributes->>'desired_capacity')::int = 1)`,
    );
    expect(groups.length, 'the demo has a capacity-1 group').toBeGreaterThan(0);
    const list = await risks();
    for (const g of groups)
      expect(
        named(list, g.id).filter((r) => r.kind === 'spof').length,
        `group ${g.native_id}`,
      ).toBeGreaterThan(0);
  });
  it('a NAT gateway that private subnets in several AZs route through is a spof risk', async () => {
    const rts = await live(a.tenant.id, sql`type = 'aws_vpc_route_table'`);
    const subnets = new Map(
      (await live(a.tenant.id, sql`type = 'aws_vpc_subnet' or type like '%subnet'`)).map((s) => [
        s.native_id,
        s.availability_zone ?? s.attributes.availability_zone,
      ]),
    );
    const azsByNat = new Map<string, Set<string>>();
    for (const rt of rts) {
      for (const route of rt.attributes.routes ?? []) {
        if (!route.nat_gateway_id) continue;
        const set = azsByNat.get(route.nat_gateway_id) ?? new Set<string>();
        for (const as of rt.attributes.associations ?? []) {
          const az = subnets.get(as.subnet_id);
          if (az) set.add(az);
        }
        azsByNat.set(route.nat_gateway_id, set);
      }
    }
    const multi = [...azsByNat].filter(([, s]) => s.size > 1).map(([n]) => n);
    expect(multi.length, 'the demo has a NAT gateway serving several AZs').toBeGreaterThan(0);
    const nats = await live(a.tenant.id, sql`type = 'aws_vpc_nat_gateway'`);
    const list = await risks();
    for (const natId of multi) {
      const nat = nats.find((n) => n.native_id === natId)!;
      expect(named(list, nat.id).filter((r) => r.kind === 'spof').length, `NAT ${natId}`).toBeGreaterThan(0);
    }
  });
  it('the toxic combination: a public database with no backups and no deletion protection, with findings', async () => {
    const dbs = await live(
      a.tenant.id,
      sql`type = 'aws_rds_db_instance' and attributes->>'publicly_accessible' = 'true'
        and (attributes->>'backup_retention_period')::int = 0 and attributes->>'deletion_protection' = 'false'`,
    );
    expect(dbs.length, 'the demo has the toxic database').toBeGreaterThan(0);
    const list = await risks();
    for (const d of dbs) {
      const toxic = named(list, d.id).filter((r) => r.kind === 'toxic_combination');
      expect(toxic.length, `toxic combination naming ${d.native_id}`).toBeGreaterThan(0);
      expect(toxic.some((r) => r.resources.length >= 2 && r.finding_ids.length >= 2)).toBe(true);
      // the finding ids are findings of ours
      const fids: string[] = toxic.flatMap((r) => r.finding_ids);
      const found = await sql<{ n: number }>`select count(*)::int as n from findings
        where tenant_id = ${a.tenant.id} and id = any(${fids}::uuid[])`.execute(t.db);
      expect(found.rows[0]!.n).toBe(new Set(fids).size);
    }
  });
  it('a tenant without an environment: {risks: []}; other tenant sees none of ours', async () => {
    const res = await get('/api/v1/graph/risks', tokEmpty);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ risks: [] });
    const ours = new Set((await live(a.tenant.id)).map((r) => r.id));
    const theirs = await get('/api/v1/graph/risks', tokB);
    for (const r of theirs.body.risks) for (const n of r.resources) expect(ours.has(n.id)).toBe(false);
  });
});

/** Every item of a drift answer happened inside its window. */
function expectInWindow(body: any) {
  const from = Date.parse(body.window.from);
  const to = Date.parse(body.window.to);
  for (const list of ['added', 'removed', 'changed'])
    for (const item of body[list]) {
      const at = Date.parse(item.at);
      expect(
        at >= from && at <= to,
        `${list} ${item.id} at ${item.at} in ${JSON.stringify(body.window)}`,
      ).toBe(true);
    }
}

describe('graph drift', () => {
  it('window shape: days default 7; days=N; since/until', async () => {
    const def = await get('/api/v1/graph/drift');
    expect(def.status).toBe(200);
    for (const k of ['window', 'added', 'removed', 'changed']) expect(def.body).toHaveProperty(k);
    const span = Date.parse(def.body.window.to) - Date.parse(def.body.window.from);
    expect(Math.abs(span - 7 * 86_400_000)).toBeLessThan(120_000);
    // the window of `days=N` covers the latest observation of the environment (its last snapshot)
    const last = await sql<{ at: Date }>`select max(observed_at) as at from inventory_snapshots
      where tenant_id = ${a.tenant.id}`.execute(t.db);
    expect(
      Date.parse(def.body.window.to),
      `window ${JSON.stringify(def.body.window)}, last snapshot ${last.rows[0]!.at.toISOString()}`,
    ).toBeGreaterThanOrEqual(last.rows[0]!.at.getTime());
    const d30 = await get('/api/v1/graph/drift?days=30');
    expect(d30.status).toBe(200);
    const s30 = Date.parse(d30.body.window.to) - Date.parse(d30.body.window.from);
    expect(Math.abs(s30 - 30 * 86_400_000)).toBeLessThan(120_000);
    const since = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const until = new Date(Date.now() - 86_400_000).toISOString();
    const win = await get(
      `/api/v1/graph/drift?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`,
    );
    expect(win.status).toBe(200);
    expect(Date.parse(win.body.window.from)).toBe(Date.parse(since));
    expect(Date.parse(win.body.window.to)).toBe(Date.parse(until));
    for (const list of ['added', 'removed', 'changed'])
      for (const item of win.body[list]) {
        const at = Date.parse(item.at);
        expect(at >= Date.parse(since) && at <= Date.parse(until), `${list} at ${item.at}`).toBe(true);
      }
  });
  it('days outside 1..90 and bad since/until are 400', async () => {
    for (const q of [
      'days=0',
      'days=91',
      'days=-1',
      'days=abc',
      'days=1.5',
      'since=yesterday',
      'until=nope',
      'since=2026-13-45T00:00:00Z',
    ]) {
      const res = await get(`/api/v1/graph/drift?${q}`);
      expect(res.status, q).toBe(400);
    }
    for (const q of ['days=1', 'days=90'])
      expect((await get(`/api/v1/graph/drift?${q}`)).status, q).toBe(200);
  });
  it('shows the seeded drift of the first scan: changed fields with before/after and an actor', async () => {
    const res = await get('/api/v1/graph/drift?days=90');
    expect(res.status).toBe(200);
    expectInWindow(res.body);
    for (const list of ['added', 'removed', 'changed'])
      for (const item of res.body[list]) {
        expectNode(item);
        expect(item).toHaveProperty('at');
        expect(item).toHaveProperty('actor');
      }
    for (const c of res.body.changed) {
      expect(c.fields.length).toBeGreaterThan(0);
      for (const f of c.fields) for (const k of ['path', 'before', 'after']) expect(f).toHaveProperty(k);
    }
    // independently: live databases whose backup retention is 0 now were changed in the window
    const toxic = await live(
      a.tenant.id,
      sql`type = 'aws_rds_db_instance' and (attributes->>'backup_retention_period')::int = 0`,
    );
    expect(toxic.length).toBeGreaterThan(0);
    const changedDb = res.body.changed.filter((c: any) => toxic.some((d) => d.id === c.id));
    expect(changedDb.length, 'the seeded backup-retention drift').toBeGreaterThan(0);
    const field = changedDb
      .flatMap((c: any) => c.fields.map((f: any) => ({ ...f, actor: c.actor })))
      .find((f: any) => /backup_retention_period/.test(f.path));
    expect(field).toBeDefined();
    expect(Number(field.after)).toBe(0);
    expect(Number(field.before)).toBeGreaterThan(0);
    expect(typeof field.actor).toBe('string');
    expect(field.actor.length).toBeGreaterThan(0);
  });
  it('a tenant without an environment: empty lists', async () => {
    const res = await get('/api/v1/graph/drift', tokEmpty);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ added: [], removed: [], changed: [] });
  });
});

describe('resilience', () => {
  it('free tier gets 402 tier_restricted on both', async () => {
    for (const p of ['/api/v1/resilience/status', '/api/v1/resilience/findings']) {
      const res = await get(p, tokFree);
      expect(res.status, p).toBe(402);
      expect(res.body).toMatchObject({ error: 'tier_restricted', upgrade_required: true });
      expect(typeof res.body.message).toBe('string');
    }
  });
  it('a tenant without an environment: no_data and no findings', async () => {
    const s = await get('/api/v1/resilience/status', tokEmpty);
    expect(s.status).toBe(200);
    expect(s.body.status).toBe('no_data');
    const f = await get('/api/v1/resilience/findings', tokEmpty);
    expect(f.status).toBe(200);
    expect(f.body.findings).toEqual([]);
  });
  it('after a scan: ready, with findings of the shape; AZ loss lists the single-AZ resources', async () => {
    const status = await until('resilience ready', async () => {
      const s = await get('/api/v1/resilience/status');
      return s.body?.status === 'ready' ? s.body : undefined;
    });
    for (const k of ['status', 'last_run_at', 'scenarios', 'findings']) expect(status).toHaveProperty(k);
    expect(Number.isNaN(Date.parse(status.last_run_at))).toBe(false);
    const res = await get('/api/v1/resilience/findings');
    expect(res.status).toBe(200);
    const findings: any[] = res.body.findings;
    expect(findings.length).toBeGreaterThan(0);
    for (const f of findings) {
      for (const k of [
        'id',
        'scenario',
        'title',
        'severity',
        'trigger',
        'impacted',
        'reason',
        'recommendation',
      ])
        expect(f, k).toHaveProperty(k);
      expect(['az_loss', 'nat_loss', 'role_revocation', 'single_instance']).toContain(f.scenario);
      f.impacted.forEach(expectNode);
    }
    // the single-AZ database's AZ: its loss names the database
    const db = (
      await live(a.tenant.id, sql`type = 'aws_rds_db_instance' and attributes->>'multi_az' = 'false'`)
    )[0]!;
    const az = db.availability_zone ?? db.attributes.availability_zone;
    expect(az).toBeTruthy();
    const azLoss = findings.filter((f) => f.scenario === 'az_loss' && JSON.stringify(f.trigger).includes(az));
    expect(azLoss.length, `az_loss of ${az}`).toBeGreaterThan(0);
    expect(azLoss.flatMap((f) => f.impacted.map((n: any) => n.id))).toContain(db.id);
    // a NAT loss is among the scenarios (the demo has NAT gateways)
    expect(findings.some((f) => f.scenario === 'nat_loss')).toBe(true);
  });
  it("another tenant's findings are not ours", async () => {
    const ours = new Set((await live(a.tenant.id)).map((r) => r.id));
    const res = await get('/api/v1/resilience/findings', tokB);
    expect(res.status).toBe(200);
    for (const f of res.body.findings) for (const n of f.impacted) expect(ours.has(n.id)).toBe(false);
  });
});

describe('drift after demo advance', () => {
  it('demo advance + scan: drift shows the later changes', async () => {
    const before = new Set((await live(a.tenant.id)).map((r) => r.id));
    await admin(['demo', 'advance', '--tenant', a.tenant.slug, '--days', '2']);
    await admin(['scan', '--tenant', a.tenant.slug, '--wait']);
    const after = await live(a.tenant.id);
    const addedIds = after.filter((r) => !before.has(r.id)).map((r) => r.id);
    const afterIds = new Set(after.map((r) => r.id));
    const removedIds = [...before].filter((id) => !afterIds.has(id));
    expect(addedIds.length + removedIds.length, 'advance changed the inventory').toBeGreaterThan(0);
    const res = await get('/api/v1/graph/drift?days=1');
    expect(res.status).toBe(200);
    expectInWindow(res.body);
    const added = res.body.added.map((x: any) => x.id);
    const removed = res.body.removed.map((x: any) => x.id);
    for (const id of addedIds) expect(added).toContain(id);
    for (const id of removedIds) expect(removed).toContain(id);
  }, 300_000);
});
