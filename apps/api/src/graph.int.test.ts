import { describe, expect } from 'vitest';
import { advanceDemo, connectEnvironment, getScan, requestScan, runScan } from '@opsi/core';
import { sql } from '@opsi/db';
import { JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';
import { call, createTenantWithUser, mintTestToken, testRedisUrl } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// Every expectation about the seeded demo is computed here from the inventory tables (SQL over
// resources, resource_edges, resource_history, inventory_events, findings), never from the graph code.

type Row = Record<string, any>;
const ids = (list: Row[]) => list.map((r) => String(r.id)).sort();

async function until<T>(what: string, f: () => Promise<T | undefined | null | false>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await f();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const it = apiTest
  // Only the pulse pool: tenant A's scan, then the resilience job it enqueues.
  .override({ workerConfig: { WORKER_QUEUES: ['pulse'] } })
  .extend('producer', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const producer = new JobProducer(createRedis(testRedisUrl(), 'producer'), t.redisPrefix);
    onCleanup(() => producer.close());
    return producer;
  })
  // A free-tier tenant, and one with nothing connected.
  .extend('empty', { scope: 'file' }, async ({ t }) => createTenantWithUser(t))
  .extend(
    'emptyRead',
    { scope: 'file' },
    async ({ t, empty }) => (await mintTestToken(t, empty, 'read')).token,
  )
  .extend(
    'rows',
    { scope: 'file' },
    async ({ t }) =>
      async (q: ReturnType<typeof sql>) =>
        (await q.execute(t.db)).rows as Row[],
  )
  .extend(
    'get',
    { scope: 'file' },
    async ({ url, aRead }) =>
      (path: string, token = aRead) =>
        call(url, 'GET', path, { token }),
  )
  /** The one resource of tenant A matching a condition. */
  .extend(
    'one',
    { scope: 'file' },
    async ({ rows }) =>
      async (tenantId: string, where: ReturnType<typeof sql>) => {
        const r = await rows(
          sql`select id, arn, native_id, availability_zone from resources where tenant_id = ${tenantId} and deleted_at is null and ${where}`,
        );
        expect(r).toHaveLength(1);
        return r[0]!;
      },
  )
  .extend(
    'paymentsDb',
    { scope: 'file' },
    async ({ one, a }) =>
      () =>
        one(
          a.tenant.id,
          sql`type = 'aws_rds_db_instance' and (attributes->>'publicly_accessible')::boolean
        and (attributes->>'backup_retention_period')::int = 0 and not (attributes->>'deletion_protection')::boolean`,
        ),
  )
  /** NAT gateways whose route tables serve subnets in more than one AZ. */
  .extend(
    'multiAzNats',
    { scope: 'file' },
    async ({ rows }) =>
      async (tenantId: string) =>
        rows(sql`
    select nat.id, nat.availability_zone from resources nat
    join resource_edges rt on rt.tenant_id = nat.tenant_id and rt.to_arn = nat.arn and rt.kind = 'routes-to'
    join resource_edges se on se.tenant_id = nat.tenant_id and se.to_arn = rt.from_arn and se.kind = 'depends-on'
    join resources s on s.tenant_id = nat.tenant_id and s.arn = se.from_arn and s.type = 'aws_vpc_subnet'
    where nat.tenant_id = ${tenantId} and nat.type = 'aws_vpc_nat_gateway' and nat.deleted_at is null
    group by nat.id, nat.availability_zone having count(distinct s.availability_zone) > 1`),
  )
  .extend(
    'openFindingIds',
    { scope: 'file' },
    async ({ rows, a }) =>
      async (arn: string, checks: string[]) =>
        ids(
          await rows(sql`select f.id from findings f join finding_resources fr on fr.finding_id = f.id
      where f.tenant_id = ${a.tenant.id} and fr.arn = ${arn} and f.status = 'open' and f.check_id in (${sql.join(checks)})`),
        ),
  );

// Tenants A and B have demo environments of different seeds (42 and 43), each scanned; C (free) and
// the empty tenant have none.
it.beforeAll(async ({ t, a, b, producer, get }) => {
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await connectEnvironment(t.db, b.tenant.id, { kind: 'demo', seed: 43, size: 'small', epoch: '2026-11-01' });
  // Tenant A's scan goes through the worker: the scan job, then the resilience job it enqueues.
  const scan = await requestScan(t.db, producer, a.tenant.id, 'test');
  const sb = await requestScan(t.db, null, b.tenant.id, 'test');
  await runScan(t.db, sb.id);
  await until('scan', async () => (await getScan(t.db, a.tenant.id, scan.id))?.status === 'completed');
  await until('resilience', async () => (await get('/api/v1/resilience/status')).body.status === 'ready');
}, 180_000);

describe('GET /api/v1/graph/summary', () => {
  it('counts the nodes by type as the inventory holds them, with the health roll-up and the last scan', async ({
    a,
    rows,
    get,
  }) => {
    const res = await get('/api/v1/graph/summary');
    expect(res.status).toBe(200);
    const byType = await rows(
      sql`select type, count(*)::int as n from resources where tenant_id = ${a.tenant.id} and deleted_at is null group by type`,
    );
    expect(res.body.by_type).toEqual(Object.fromEntries(byType.map((r) => [r.type, r.n])));
    expect(res.body.nodes).toBe(byType.reduce((s, r) => s + Number(r.n), 0));
    const [stored] = await rows(
      sql`select count(*)::int as n from resource_edges where tenant_id = ${a.tenant.id}`,
    );
    expect(res.body.edges).toBe(stored!.n + res.body.derived_edges);
    expect(res.body.inferred_edges).toBeGreaterThanOrEqual(res.body.derived_edges);
    expect(res.body.structural_edges + res.body.dependency_edges).toBe(res.body.edges);
    const h = res.body.health;
    expect(h.healthy + h.degraded + h.at_risk + h.critical).toBe(res.body.nodes);
    expect(h.critical).toBeGreaterThan(0);
    const [scan] = await rows(
      sql`select max(finished_at) as at from inventory_scans where tenant_id = ${a.tenant.id} and status = 'completed'`,
    );
    expect(res.body.last_scan_at).toBe((scan!.at as Date).toISOString());
  });

  it('a tenant without an environment gets zeros and last_scan_at null', async ({ emptyRead, get }) => {
    const res = await get('/api/v1/graph/summary', emptyRead);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      nodes: 0,
      edges: 0,
      structural_edges: 0,
      dependency_edges: 0,
      inferred_edges: 0,
      derived_edges: 0,
      by_type: {},
      health: { healthy: 0, degraded: 0, at_risk: 0, critical: 0 },
      last_scan_at: null,
    });
  });

  it('needs a token', async ({ url }) => {
    expect((await call(url, 'GET', '/api/v1/graph/summary')).status).toBe(401);
  });
});

describe('GET /api/v1/graph/search', () => {
  it('finds by name, native id, ARN, id and tag value, with open findings, exact match first', async ({
    a,
    rows,
    get,
    paymentsDb,
  }) => {
    const db = await paymentsDb();
    for (const q of ['prod-payments-db', db.arn, db.id, String(db.native_id).toUpperCase()]) {
      const res = await get(`/api/v1/graph/search?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(res.body.results[0].id).toBe(db.id);
      expect(Object.keys(res.body.results[0]).sort()).toEqual(
        ['account_id', 'arn', 'id', 'name', 'native_id', 'open_findings', 'region', 'type'].sort(),
      );
      const [open] = await rows(sql`select count(distinct f.id)::int as n from findings f
        join finding_resources fr on fr.finding_id = f.id
        where fr.tenant_id = ${a.tenant.id} and fr.arn = ${db.arn} and f.status in ('open', 'acknowledged', 'in_progress')`);
      expect(res.body.results[0].open_findings).toBe(open!.n);
    }
    // a tag value: every resource tagged team=payments, and only those of the type asked for
    const tagged =
      await rows(sql`select id from resources where tenant_id = ${a.tenant.id} and deleted_at is null
      and type = 'aws_ec2_instance' and tags->>'owner' = 'payments@acme.example'`);
    const res = await get('/api/v1/graph/search?q=payments%40acme.example&type=aws_ec2_instance&limit=500');
    expect(ids(res.body.results)).toEqual(ids(tagged));
    const limited = await get('/api/v1/graph/search?q=prod&limit=2');
    expect(limited.body.results).toHaveLength(2);
  });

  it('never answers another tenant’s resources', async ({ b, emptyRead, rows, get }) => {
    const [bNat] = await rows(
      sql`select native_id from resources where tenant_id = ${b.tenant.id} and type = 'aws_vpc_nat_gateway' limit 1`,
    );
    const res = await get(`/api/v1/graph/search?q=${bNat!.native_id}`);
    expect(res.body.results).toEqual([]);
    expect((await get('/api/v1/graph/search?q=prod', emptyRead)).body).toEqual({ results: [] });
  });

  it.for([
    [''],
    ['?q='],
    ['?q=%20%20'],
    [`?q=${'x'.repeat(201)}`],
    ['?q=a&limit=0'],
    ['?q=a&limit=501'],
    ['?q=a&limit=ten'],
  ])('400 for %s', async ([query], { get }) => {
    const res = await get(`/api/v1/graph/search${query}`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual(expect.any(String));
  });
});

describe('GET /api/v1/graph/blast-radius/{id}', () => {
  it('the production database takes down the services that use it, by depth, with paths and edge kinds', async ({
    a,
    rows,
    get,
    paymentsDb,
  }) => {
    const db = await paymentsDb();
    // Independently: instances that depend on it, the target groups that target them, the load
    // balancers that route to those, the DNS records that resolve to those.
    const apps =
      await rows(sql`select r.id, r.arn from resource_edges e join resources r on r.tenant_id = e.tenant_id and r.arn = e.from_arn
      where e.tenant_id = ${a.tenant.id} and e.to_arn = ${db.arn} and e.kind = 'depends-on' and r.type = 'aws_ec2_instance'`);
    expect(apps.length).toBeGreaterThan(0);
    const tgs =
      await rows(sql`select distinct r.id, r.arn from resource_edges e join resources r on r.tenant_id = e.tenant_id and r.arn = e.from_arn
      where e.tenant_id = ${a.tenant.id} and e.kind = 'targets' and e.to_arn in (${sql.join(apps.map((x) => x.arn))})`);
    const lbs =
      await rows(sql`select distinct r.id, r.arn from resource_edges e join resources r on r.tenant_id = e.tenant_id and r.arn = e.from_arn
      where e.tenant_id = ${a.tenant.id} and e.kind = 'routes-to' and e.to_arn in (${sql.join(tgs.map((x) => x.arn))})`);
    const dns =
      await rows(sql`select distinct r.id from resource_edges e join resources r on r.tenant_id = e.tenant_id and r.arn = e.from_arn
      where e.tenant_id = ${a.tenant.id} and e.kind = 'resolves-to' and e.to_arn in (${sql.join(lbs.map((x) => x.arn))})`);
    expect([tgs.length, lbs.length, dns.length].every((n) => n > 0)).toBe(true);

    const res = await get(`/api/v1/graph/blast-radius/${db.id}?depth=4`);
    expect(res.status).toBe(200);
    expect(res.body.resource.id).toBe(db.id);
    expect(res.body.depth).toBe(4);
    const at = (depth: number) =>
      res.body.impacted
        .filter((x: Row) => x.depth === depth)
        .map((x: Row) => x.id)
        .sort();
    expect(at(1)).toEqual(expect.arrayContaining(ids(apps)));
    expect(at(2)).toEqual(expect.arrayContaining(ids(tgs)));
    expect(at(3)).toEqual(expect.arrayContaining(ids(lbs)));
    expect(at(4)).toEqual(expect.arrayContaining(ids(dns)));
    const lb = res.body.impacted.find((x: Row) => x.id === lbs[0]!.id);
    expect(lb.path[0]).toBe(db.id);
    expect(lb.path.at(-1)).toBe(lb.id);
    expect(lb.path).toHaveLength(4);
    expect(lb.via).toEqual(['depends-on', 'targets', 'routes-to']);
    expect(lb.impact).toBe('fails');
    expect(res.body.total).toBe(res.body.impacted.length);
    const byDepth: Record<string, number> = {};
    for (const x of res.body.impacted) byDepth[x.depth] = (byDepth[x.depth] ?? 0) + 1;
    expect(res.body.by_depth).toEqual(byDepth);

    // depth bounds the walk; the default is 3
    const d3 = await get(`/api/v1/graph/blast-radius/${db.id}`);
    expect(d3.body.depth).toBe(3);
    expect(d3.body.impacted.map((x: Row) => x.id)).not.toEqual(expect.arrayContaining(ids(dns)));
  });

  it('one of several targets failing only degrades its target group', async ({ a, rows, get }) => {
    const [inst] =
      await rows(sql`select r.id from resource_edges e join resources r on r.tenant_id = e.tenant_id and r.arn = e.to_arn
      where e.tenant_id = ${a.tenant.id} and e.kind = 'targets' and e.from_arn in (
        select from_arn from resource_edges where tenant_id = ${a.tenant.id} and kind = 'targets' group by from_arn having count(*) > 1)
      order by r.arn limit 1`);
    const res = await get(`/api/v1/graph/blast-radius/${inst!.id}?depth=1`);
    const tg = res.body.impacted.find((x: Row) => x.type === 'aws_ec2_target_group');
    expect(tg.impact).toBe('degraded');
  });

  it('names the resource by its id, its URL-encoded ARN or its native id', async ({ get, paymentsDb }) => {
    const db = await paymentsDb();
    const byId = await get(`/api/v1/graph/blast-radius/${db.id}`);
    for (const ref of [encodeURIComponent(db.arn), db.native_id]) {
      const res = await get(`/api/v1/graph/blast-radius/${ref}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(byId.body);
    }
  });

  it('another tenant’s resource is 404 by id, ARN and native id, and so is an unknown one', async ({
    b,
    bRead,
    emptyRead,
    rows,
    get,
  }) => {
    const [nat] = await rows(
      sql`select id, arn, native_id from resources where tenant_id = ${b.tenant.id} and type = 'aws_vpc_nat_gateway' order by arn limit 1`,
    );
    for (const ref of [nat!.id, encodeURIComponent(nat!.arn), nat!.native_id, 'i-doesnotexist']) {
      const res = await get(`/api/v1/graph/blast-radius/${ref}`);
      expect(res.status).toBe(404);
      expect(res.body.detail).toEqual(expect.any(String));
      // ... and its own tenant sees it
      if (ref !== 'i-doesnotexist')
        expect((await get(`/api/v1/graph/blast-radius/${ref}`, bRead)).status).toBe(200);
    }
    expect((await get(`/api/v1/graph/blast-radius/${nat!.id}`, emptyRead)).status).toBe(404);
  });

  it.for(['0', '11', 'x', '2.5'])('400 for depth=%s', async (depth, { get, paymentsDb }) => {
    const db = await paymentsDb();
    expect((await get(`/api/v1/graph/blast-radius/${db.id}?depth=${depth}`)).status).toBe(400);
  });
});

describe('GET /api/v1/graph/health', () => {
  it('is critical where a critical finding is, and rolls up to what depends on it', async ({
    a,
    rows,
    get,
    paymentsDb,
  }) => {
    const crit =
      await rows(sql`select distinct r.id, r.arn from findings f join finding_resources fr on fr.finding_id = f.id
      join resources r on r.tenant_id = fr.tenant_id and r.arn = fr.arn and r.deleted_at is null
      where f.tenant_id = ${a.tenant.id} and f.status = 'open' and f.severity = 'critical'`);
    expect(crit.length).toBeGreaterThan(0);
    const res = await get('/api/v1/graph/health?status=critical&limit=500');
    expect(res.status).toBe(200);
    expect(ids(res.body.resources)).toEqual(ids(crit));
    expect(res.body.resources.every((r: Row) => r.open_findings.critical > 0)).toBe(true);
    expect(res.body.totals.critical).toBe(crit.length);
    // The checkout instances depend on the (critical) database: at risk, inherited from it.
    const db = await paymentsDb();
    const apps =
      await rows(sql`select r.id from resource_edges e join resources r on r.tenant_id = e.tenant_id and r.arn = e.from_arn
      where e.tenant_id = ${a.tenant.id} and e.to_arn = ${db.arn} and e.kind = 'depends-on'`);
    const atRisk = await get('/api/v1/graph/health?status=at_risk&limit=500');
    const mine = atRisk.body.resources.filter((r: Row) => ids(apps).includes(r.id));
    expect(ids(mine)).toEqual(ids(apps));
    expect(new Set(mine.map((r: Row) => r.inherited_from))).toEqual(new Set([db.id]));
  });

  it('pages with limit and offset; worst first; totals cover every node', async ({ emptyRead, get }) => {
    const all = await get('/api/v1/graph/health?limit=500');
    const summary = await get('/api/v1/graph/summary');
    expect(all.body.totals).toEqual(summary.body.health);
    const rank = ['healthy', 'degraded', 'at_risk', 'critical'];
    const levels = all.body.resources.map((r: Row) => rank.indexOf(r.health));
    expect(levels).toEqual([...levels].sort((x: number, y: number) => y - x));
    const page = await get('/api/v1/graph/health?limit=5&offset=5');
    expect(page.body.resources.map((r: Row) => r.id)).toEqual(
      all.body.resources.slice(5, 10).map((r: Row) => r.id),
    );
    const emptyRes = await get('/api/v1/graph/health', emptyRead);
    expect(emptyRes.body).toEqual({
      resources: [],
      totals: { healthy: 0, degraded: 0, at_risk: 0, critical: 0 },
      total: 0,
    });
  });

  it.for(['?limit=0', '?limit=501', '?offset=-1', '?status=broken', '?offset=x'])(
    '400 for %s',
    async (q, { get }) => {
      expect((await get(`/api/v1/graph/health${q}`)).status).toBe(400);
    },
  );
});

describe('GET /api/v1/graph/risks', () => {
  it('lists the NAT gateway serving several AZs, the capacity-1 group and the single-AZ database as SPOFs', async ({
    a,
    rows,
    get,
    multiAzNats,
    openFindingIds,
  }) => {
    const res = await get('/api/v1/graph/risks');
    expect(res.status).toBe(200);
    const spofs = res.body.risks.filter((r: Row) => r.kind === 'spof');
    const main = spofs.map((r: Row) => r.resources[0].id);
    const nats = await multiAzNats(a.tenant.id);
    const groups =
      await rows(sql`select id from resources where tenant_id = ${a.tenant.id} and deleted_at is null
      and type = 'aws_ec2_autoscaling_group' and ((attributes->>'desired_capacity')::int <= 1 or (attributes->>'max_size')::int <= 1)`);
    const dbs =
      await rows(sql`select id, arn from resources where tenant_id = ${a.tenant.id} and deleted_at is null
      and type = 'aws_rds_db_instance' and not (attributes->>'multi_az')::boolean`);
    for (const list of [nats, groups, dbs]) {
      expect(list.length).toBeGreaterThan(0);
      expect(main).toEqual(expect.arrayContaining(ids(list)));
    }
    // Each names the open findings on it.
    const dbRisk = spofs.find((r: Row) => r.resources[0].id === dbs[0]!.id);
    expect(dbRisk.finding_ids).toEqual(
      expect.arrayContaining(await openFindingIds(dbs[0]!.arn, ['sre.rds_single_az'])),
    );
    // Most severe first.
    const rank = ['low', 'medium', 'high', 'critical'];
    const sev = res.body.risks.map((r: Row) => rank.indexOf(r.severity));
    expect(sev).toEqual([...sev].sort((x: number, y: number) => y - x));
  });

  it('finds the toxic combination: Internet-exposed instances reaching the public, unprotected database', async ({
    a,
    rows,
    get,
    paymentsDb,
    openFindingIds,
  }) => {
    const db = await paymentsDb();
    // Running instances with a public address behind a security group open to 0.0.0.0/0.
    const exposed = await rows(sql`select distinct i.id from resources i
      join resource_edges p on p.tenant_id = i.tenant_id and p.from_arn = i.arn and p.kind = 'protected-by'
      join resources sg on sg.tenant_id = i.tenant_id and sg.arn = p.to_arn
      where i.tenant_id = ${a.tenant.id} and i.type = 'aws_ec2_instance' and i.deleted_at is null
        and i.attributes->>'public_ip_address' is not null
        and exists (select 1 from jsonb_array_elements(sg.attributes->'rules') rule
          where rule->>'type' = 'ingress' and (rule->>'cidr_ipv4' = '0.0.0.0/0' or rule->>'cidr_ipv6' = '::/0'))`);
    expect(exposed.length).toBeGreaterThan(0);
    const res = await get('/api/v1/graph/risks');
    const toxic = res.body.risks.find(
      (r: Row) => r.kind === 'toxic_combination' && r.resources[0].id === db.id,
    );
    expect(toxic).toBeDefined();
    expect(toxic.severity).toBe('critical');
    expect(toxic.resources.map((n: Row) => n.id)).toEqual(expect.arrayContaining(ids(exposed)));
    const combined = await openFindingIds(db.arn, [
      'security.rds_public',
      'sre.rds_no_backups',
      'sre.rds_no_deletion_protection',
    ]);
    expect(combined.length).toBe(3);
    expect(toxic.finding_ids).toEqual(expect.arrayContaining(combined));
  });

  it('an empty tenant has no risks', async ({ emptyRead, get }) => {
    expect((await get('/api/v1/graph/risks', emptyRead)).body).toEqual({ risks: [] });
  });
});

describe('GET /api/v1/graph/drift', () => {
  it('shows the seeded drift of the first scan’s past with before, after and the CloudTrail actor', async ({
    a,
    rows,
    get,
    paymentsDb,
  }) => {
    const res = await get('/api/v1/graph/drift?days=7');
    expect(res.status).toBe(200);
    const history = await rows(sql`
      with snaps as (select id, row_number() over (order by observed_at) as n from inventory_snapshots where tenant_id = ${a.tenant.id})
      select r.id, h.change, h.changed_fields from resource_history h join snaps s on s.id = h.snapshot_id and s.n > 1
      join resources r on r.tenant_id = h.tenant_id and r.arn = h.arn where h.tenant_id = ${a.tenant.id}`);
    expect(ids(res.body.added)).toEqual(ids(history.filter((h) => h.change === 'created')));
    expect(ids(res.body.removed)).toEqual(ids(history.filter((h) => h.change === 'deleted')));
    expect(ids(res.body.changed)).toEqual(ids(history.filter((h) => h.change === 'updated')));
    // The backup change on the production database, by the principal CloudTrail names.
    const db = await paymentsDb();
    const [event] = await rows(sql`select actor from inventory_events where tenant_id = ${a.tenant.id}
      and kind = 'cloudtrail' and name = 'ModifyDBInstance' and ${db.arn} = any(arns)`);
    const change = res.body.changed.find((c: Row) => c.id === db.id);
    expect(change.actor).toBe(event!.actor);
    expect(change.fields).toContainEqual({ path: 'attributes.backup_retention_period', before: 7, after: 0 });
    // Every actor is the principal of a CloudTrail event that names the resource.
    for (const item of [...res.body.added, ...res.body.removed, ...res.body.changed]) {
      const events = await rows(sql`select actor from inventory_events where tenant_id = ${a.tenant.id}
        and kind = 'cloudtrail' and ${item.arn} = any(arns)`);
      expect(events.map((e) => e.actor)).toContain(item.actor);
    }
    // The first snapshot is the baseline: a window over it adds nothing more.
    const wide = await get('/api/v1/graph/drift?days=90');
    expect(ids(wide.body.added)).toEqual(ids(res.body.added));
  });

  it('takes since/until, and a window with nothing in it is empty', async ({ emptyRead, get }) => {
    const res = await get('/api/v1/graph/drift?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      window: { from: '2020-01-01T00:00:00.000Z', to: '2020-01-02T00:00:00.000Z' },
      added: [],
      removed: [],
      changed: [],
      truncated: false,
    });
    const e = await get('/api/v1/graph/drift', emptyRead);
    expect(e.status).toBe(200);
    expect([e.body.added, e.body.removed, e.body.changed]).toEqual([[], [], []]);
  });

  it.for([
    '?days=0',
    '?days=91',
    '?days=x',
    '?since=yesterday',
    '?until=2026-13-01T00:00:00Z',
    '?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z',
    '?days=3&since=2026-11-01T00:00:00Z',
  ])('400 for %s', async (q, { get }) => {
    const res = await get(`/api/v1/graph/drift${q}`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual(expect.any(String));
  });
});

describe('resilience', () => {
  it('is ready after the scan’s job, and the loss of the AZ holding the single-AZ resources lists them', async ({
    a,
    rows,
    get,
    paymentsDb,
    multiAzNats,
  }) => {
    const status = await get('/api/v1/resilience/status');
    expect(status.status).toBe(200);
    expect(status.body).toEqual({
      status: 'ready',
      last_run_at: expect.any(String),
      scenarios: expect.any(Number),
      findings: expect.any(Number),
      snapshot_id: expect.any(String),
    });
    const db = await paymentsDb();
    const res = await get('/api/v1/resilience/findings?limit=500');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(status.body.findings);
    const az = res.body.findings.find(
      (f: Row) => f.scenario === 'az_loss' && f.trigger.ref === db.availability_zone,
    );
    expect(az).toBeDefined();
    const groups =
      await rows(sql`select id from resources where tenant_id = ${a.tenant.id} and deleted_at is null
      and type = 'aws_ec2_autoscaling_group' and attributes->'availability_zones' = ${JSON.stringify([db.availability_zone])}::jsonb`);
    const nats = (await multiAzNats(a.tenant.id)).filter((n) => n.availability_zone === db.availability_zone);
    expect(groups.length + nats.length).toBeGreaterThan(1);
    expect(az.impacted.map((n: Row) => n.id)).toEqual(
      expect.arrayContaining([db.id, ...ids(groups), ...ids(nats)]),
    );
    for (const n of az.impacted) expect(n.path.at(-1)).toBe(n.id);
    expect(az.recommendation).toEqual(expect.any(String));

    // The NAT gateway's loss; the capacity-1 group's single instance; a role's revocation.
    const nat = res.body.findings.find((f: Row) => f.scenario === 'nat_loss');
    expect(nat.trigger.resource.id).toBe(nats[0]!.id);
    const single = res.body.findings.filter((f: Row) => f.scenario === 'single_instance');
    expect(single.flatMap((f: Row) => f.impacted.map((n: Row) => n.id))).toEqual(
      expect.arrayContaining(ids(groups)),
    );
    const role = res.body.findings.find((f: Row) => f.scenario === 'role_revocation');
    const users =
      await rows(sql`select r.id from resource_edges e join resources r on r.tenant_id = e.tenant_id and r.arn = e.from_arn
      where e.tenant_id = ${a.tenant.id} and e.to_arn = ${role.trigger.resource.arn} and e.kind = 'uses-role' and r.type = 'aws_ec2_instance'`);
    expect(role.impacted.map((n: Row) => n.id)).toEqual(expect.arrayContaining(ids(users)));

    const filtered = await get('/api/v1/resilience/findings?scenario=az_loss');
    expect(filtered.body.findings.every((f: Row) => f.scenario === 'az_loss')).toBe(true);
    const page = await get('/api/v1/resilience/findings?limit=1&offset=1');
    expect(page.body.findings.map((f: Row) => f.id)).toEqual([res.body.findings[1].id]);
  });

  it('a free tenant gets 402 tier_restricted', async ({ freeRead, get }) => {
    for (const path of ['/api/v1/resilience/status', '/api/v1/resilience/findings']) {
      const res = await get(path, freeRead);
      expect(res.status).toBe(402);
      expect(res.body).toEqual({
        error: 'tier_restricted',
        message: expect.any(String),
        upgrade_required: true,
      });
    }
  });

  it('a tenant with no run has no_data and no findings', async ({ emptyRead, get }) => {
    expect((await get('/api/v1/resilience/status', emptyRead)).body).toEqual({
      status: 'no_data',
      last_run_at: null,
      scenarios: 0,
      findings: 0,
      snapshot_id: null,
    });
    expect((await get('/api/v1/resilience/findings', emptyRead)).body).toEqual({ findings: [], total: 0 });
  });

  it.for(['?limit=0', '?limit=501', '?offset=-1', '?scenario=meteor'])('400 for %s', async (q, { get }) => {
    expect((await get(`/api/v1/resilience/findings${q}`)).status).toBe(400);
  });
});

describe('after demo advance', () => {
  it('drift shows the later changes with their actors', async ({ a, t, rows, get }) => {
    await advanceDemo(t.db, a.tenant.id, 1);
    const scan = await requestScan(t.db, null, a.tenant.id, 'test');
    await runScan(t.db, scan.id);
    const res = await get('/api/v1/graph/drift?days=1');
    expect(res.status).toBe(200);
    const [latest] = await rows(
      sql`select id from inventory_snapshots where tenant_id = ${a.tenant.id} order by observed_at desc limit 1`,
    );
    const created =
      await rows(sql`select r.id, r.arn from resource_history h join resources r on r.tenant_id = h.tenant_id and r.arn = h.arn
      where h.snapshot_id = ${latest!.id} and h.change = 'created'`);
    expect(created.length).toBeGreaterThan(0);
    expect(ids(res.body.added)).toEqual(ids(created));
    const launched = await rows(sql`select actor, arns from inventory_events where tenant_id = ${a.tenant.id}
      and kind = 'cloudtrail' and name = 'RunInstances'`);
    const inst = res.body.added.find((x: Row) => x.type === 'aws_ec2_instance');
    expect(inst.actor).toBe(launched.find((e) => e.arns.includes(inst.arn))!.actor);
    // The graph follows the new snapshot.
    const summary = await get('/api/v1/graph/summary');
    const [count] = await rows(
      sql`select count(*)::int as n from resources where tenant_id = ${a.tenant.id} and deleted_at is null`,
    );
    expect(summary.body.nodes).toBe(count!.n);
  });
});
