import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { sql } from '@opsi/db';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import { call, createTenantWithUser, mintTestToken, REPO_ROOT } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// The plan aligned with the demo environment (seed 42, the default), shipped for the tour.
const DEMO_PLAN = readFileSync(`${REPO_ROOT}docs/examples/demo-plan.txt`, 'utf8');

const script = `${REPO_ROOT}docs/examples/opsi-plan-review.sh`;

const it = apiTest
  .override({ apiConfig: { PLAN_REVIEW_BODY_LIMIT_BYTES: 256 * 1024 } })
  .extend(
    'review',
    { scope: 'file' },
    async ({ url, aWrite }) =>
      (body: unknown, token = aWrite) =>
        call(url, 'POST', '/api/v1/plan-review', { token, body }),
  )
  .extend(
    'auditCount',
    { scope: 'file' },
    async ({ t }) =>
      async (tenantId: string) =>
        Number(
          (
            await t.db
              .selectFrom('audit_log')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('tenant_id', '=', tenantId)
              .where('action', '=', 'plan_review.reviewed')
              .executeTakeFirstOrThrow()
          ).n,
        ),
  )
  /** The tenant's live resource by type and native id, read straight from the inventory. */
  .extend(
    'live',
    { scope: 'file' },
    async ({ t }) =>
      async (tenantId: string, type: string, nativeId: string) =>
        t.db
          .selectFrom('resources')
          .select(['id', 'arn', 'attributes', 'monthly_cost', 'region'])
          .where('tenant_id', '=', tenantId)
          .where('type', '=', type)
          .where('native_id', '=', nativeId)
          .where('deleted_at', 'is', null)
          .executeTakeFirstOrThrow(),
  )
  .extend(
    'openFinding',
    { scope: 'file' },
    async ({ t }) =>
      async (tenantId: string, checkId: string, arn: string) =>
        t.db
          .selectFrom('findings as f')
          .innerJoin('finding_resources as fr', 'fr.finding_id', 'f.id')
          .select(['f.id'])
          .where('f.tenant_id', '=', tenantId)
          .where('f.check_id', '=', checkId)
          .where('f.status', '=', 'open')
          .where('fr.arn', '=', arn)
          .executeTakeFirst(),
  )
  .extend('price', { scope: 'file' }, async ({ t }) => async (sku: string) => {
    const row = await t.db
      .selectFrom('prices')
      .select('usd')
      .where('region', '=', 'us-east-1')
      .where('sku', '=', sku)
      .executeTakeFirstOrThrow();
    return Number(row.usd);
  })
  // The CI script of docs/ci.md against this API. Asynchronous: the API answering the script runs in
  // this very process.
  .extend(
    'run',
    async ({ url }) =>
      (planFile: string, token: string, failAt: string) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          execFile(
            'bash',
            [script, planFile],
            { env: { PATH: process.env.PATH ?? '', OPSI_URL: url, OPSI_TOKEN: token, FAIL_AT: failAt } },
            (error, stdout, stderr) =>
              resolve({
                status: error ? (typeof error.code === 'number' ? error.code : null) : 0,
                stdout,
                stderr,
              }),
          );
        }),
  );

// Tenant B has the very same demo environment as A (same seed, same ids): isolation must still hold.
it.beforeAll(async ({ t, a, b }) => {
  for (const m of [a, b]) {
    await connectEnvironment(t.db, m.tenant.id, {
      kind: 'demo',
      seed: 42,
      size: 'small',
      epoch: '2026-11-01',
    });
    const s = await requestScan(t.db, null, m.tenant.id, 'test');
    await runScan(t.db, s.id);
  }
}, 180_000);

describe('POST /api/v1/plan-review: status codes', () => {
  it('401 without a token, 403 with a read token, 403 for the free tier; nothing audited', async ({
    url,
    free,
    aRead,
    freeWrite,
    review,
    auditCount,
  }) => {
    expect((await call(url, 'POST', '/api/v1/plan-review', { body: { plan: DEMO_PLAN } })).status).toBe(401);
    const read = await review({ plan: DEMO_PLAN }, aRead);
    expect(read.status).toBe(403);
    const tier = await review({ plan: DEMO_PLAN }, freeWrite);
    expect(tier.status).toBe(403);
    expect(tier.body.detail).toMatch(/free tier/);
    expect(await auditCount(free.tenant.id)).toBe(0);
  });

  it('400 for a missing, empty, non-string or non-Terraform plan, saying what was expected', async ({
    a,
    review,
    auditCount,
  }) => {
    const before = await auditCount(a.tenant.id);
    const missing = await review({});
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/plan/);
    const empty = await review({ plan: '  \n ' });
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toMatch(/empty/);
    expect((await review({ plan: 42 })).status).toBe(400);
    const prose = await review({ plan: 'hello world\nthis is not a plan\n' });
    expect(prose.status).toBe(400);
    expect(prose.body.detail).toMatch(/Expected the output of `terraform plan`/);
    const state = await review({
      plan: JSON.stringify({ format_version: '1.0', values: { root_module: {} } }),
    });
    expect(state.status).toBe(400);
    expect(state.body.detail).toMatch(/not a Terraform plan/);
    const badJson = await review({ plan: '{"format_version": ' });
    expect(badJson.status).toBe(400);
    const failed = await review({
      plan: 'Planning failed.\n╷\n│ Error: Invalid reference\n│\n╵\nTerraform will perform the following actions:\n',
    });
    expect(failed.status).toBe(400);
    expect(failed.body.detail).toMatch(/Invalid reference/);
    expect(await auditCount(a.tenant.id)).toBe(before);
  });

  it('413 for a body over PLAN_REVIEW_BODY_LIMIT_BYTES', async ({ review }) => {
    const res = await review({ plan: DEMO_PLAN + '#'.repeat(300 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.detail).toBeTruthy();
  });

  it('415 for a body that is not JSON', async ({ url, aWrite }) => {
    const res = await fetch(`${url}/api/v1/plan-review`, {
      method: 'POST',
      headers: { authorization: `Bearer ${aWrite}`, 'content-type': 'text/plain' },
      body: DEMO_PLAN,
    });
    expect(res.status).toBe(415);
  });

  it('"No changes." is a low-risk review with nothing to annotate', async ({ review }) => {
    const res = await review({ plan: 'No changes. Your infrastructure matches the configuration.\n' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ overall_risk: 'low', annotations: [], read_only: true });
    expect(res.body.summary).toMatchObject({ add: 0, change: 0, destroy: 0 });
  });
});

describe('POST /api/v1/plan-review: the demo-aligned plan', () => {
  let body: Awaited<ReturnType<typeof call>>['body'];
  const byAddress = (address: string) =>
    (
      body.annotations as Array<{ address: string; category: string; risk: string; citations: unknown[] }>
    ).filter((x) => x.address === address);

  it.beforeAll(async ({ review }) => {
    const res = await review({ plan: DEMO_PLAN });
    expect(res.status).toBe(200);
    body = res.body;
  });

  it('answers the contract shape: overall risk, read_only, annotations sorted from the highest risk', () => {
    expect(body.read_only).toBe(true);
    expect(body.overall_risk).toBe('critical');
    const rank = { critical: 4, high: 3, medium: 2, low: 1 } as Record<string, number>;
    const ranks = body.annotations.map((x: { risk: string }) => rank[x.risk]);
    expect(ranks).toEqual([...ranks].sort((x, y) => y - x));
    for (const x of body.annotations) {
      expect(Object.keys(x).sort()).toEqual(['address', 'category', 'citations', 'detail', 'risk', 'title']);
      expect(x.citations.length).toBeGreaterThan(0);
      for (const c of x.citations) expect(['plan_line', 'resource', 'finding']).toContain(c.kind);
    }
    expect(body.summary).toMatchObject({ add: 3, change: 2, destroy: 2, replace: 1, read: 1, drift: 1 });
    expect(body.summary.terraform_summary).toEqual({ import: 0, add: 3, change: 2, destroy: 2 });
    expect(body.warnings).toEqual([]);
    expect(body.plan_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('the replaced database: critical, its live dependents and protection, cited by line and ARN', async ({
    a,
    t,
    live,
    openFinding,
  }) => {
    const db = await live(a.tenant.id, 'aws_rds_db_instance', 'prod-payments-db');
    // Dependents computed independently: whatever depends-on / is attached to / protected by it, depth 1.
    const direct = await sql<{ from_arn: string }>`
      select from_arn from resource_edges where tenant_id = ${a.tenant.id} and to_arn = ${db.arn}
        and kind in ('depends-on', 'attached-to', 'member-of', 'protected-by', 'resolves-to', 'uses-role')`.execute(
      t.db,
    );
    expect(direct.rows.length).toBeGreaterThan(0);
    const r = body.resources.find((x: { address: string }) => x.address === 'aws_db_instance.prod');
    expect(r.live).toMatchObject({ arn: db.arn, id: db.id, matched_by: 'arn' });
    expect(r.action).toBe('replace');
    expect(r.replace_order).toBe('delete_first');
    expect(r.replace_paths).toEqual(['identifier']);
    expect(r.protection).toMatchObject({
      deletion_protection: false,
      multi_az: false,
      backup_retention_days: 0,
    });
    expect(r.dependents.by_depth['1']).toBe(direct.rows.length);
    expect(
      r.dependents.items
        .filter((d: { depth: number }) => d.depth === 1)
        .map((d: { arn: string }) => d.arn)
        .sort(),
    ).toEqual(direct.rows.map((x) => x.from_arn).sort());
    const destructive = byAddress('aws_db_instance.prod').find((x) => x.category === 'destructive')!;
    expect(destructive.risk).toBe('critical');
    const lines = DEMO_PLAN.split('\n');
    const start = lines.findIndex((l) => l.includes('# aws_db_instance.prod must be replaced')) + 1;
    const end = lines.findIndex((l, i) => i >= start && l === '    }') + 1;
    expect(end - start).toBeGreaterThan(5);
    expect(destructive.citations[0]).toEqual({ kind: 'plan_line', ref: `L${start}-L${end}` });
    expect(destructive.citations).toContainEqual({ kind: 'resource', ref: db.arn });
    for (const d of direct.rows)
      expect(destructive.citations).toContainEqual({ kind: 'resource', ref: d.from_arn });
    // multi_az = true fixes the single-AZ finding on it.
    const singleAz = await openFinding(a.tenant.id, 'sre.rds_single_az', db.arn);
    expect(singleAz).toBeTruthy();
    expect(body.findings.fixes).toContainEqual(
      expect.objectContaining({ finding_id: singleAz!.id, address: 'aws_db_instance.prod', how: 'changed' }),
    );
    // Deletion protection stays off: that finding is not fixed.
    const noProtection = await openFinding(a.tenant.id, 'sre.rds_no_deletion_protection', db.arn);
    expect(body.findings.fixes.map((f: { finding_id: string }) => f.finding_id)).not.toContain(
      noProtection?.id,
    );
  });

  it('the destroyed NAT gateway: critical, with the route tables and subnets behind it', async ({
    a,
    t,
    live,
  }) => {
    const nat = await live(a.tenant.id, 'aws_vpc_nat_gateway', 'nat-72c76fc739b80d956');
    const routers = await sql<{ from_arn: string }>`
      select from_arn from resource_edges where tenant_id = ${a.tenant.id} and to_arn = ${nat.arn} and kind = 'routes-to'`.execute(
      t.db,
    );
    expect(routers.rows.length).toBeGreaterThan(0);
    const r = body.resources.find((x: { address: string }) => x.address === 'aws_nat_gateway.use1a');
    expect(r.live.arn).toBe(nat.arn);
    expect(r.reason).toBe('delete_because_no_resource_config');
    expect(r.dependents.total).toBeGreaterThanOrEqual(3);
    const destructive = byAddress('aws_nat_gateway.use1a').find((x) => x.category === 'destructive')!;
    expect(destructive.risk).toBe('critical');
    for (const x of routers.rows)
      expect(destructive.citations).toContainEqual({ kind: 'resource', ref: x.from_arn });
  });

  it('the opened security group: introduces RDP-open on the live group the rule belongs to', async ({
    a,
    live,
    openFinding,
  }) => {
    const group = await live(a.tenant.id, 'aws_vpc_security_group', 'sg-aa5dcf3a092a38624');
    expect(await openFinding(a.tenant.id, 'security.sg_rdp_open', group.arn)).toBeUndefined();
    expect(body.findings.introduces).toContainEqual({
      check_id: 'security.sg_rdp_open',
      title: expect.any(String),
      severity: 'high',
      address: 'aws_security_group_rule.app_rdp',
      arn: group.arn,
    });
    const sec = byAddress('aws_security_group_rule.app_rdp').find((x) => x.category === 'security')!;
    expect(sec.risk).toBe('high');
    expect(sec.citations).toContainEqual({ kind: 'resource', ref: group.arn });
  });

  it('sg-web: reverts alice’s change made outside Terraform, and fixes the RDP finding', async ({
    a,
    live,
    openFinding,
  }) => {
    const web = await live(a.tenant.id, 'aws_vpc_security_group', 'sg-01aafac10bbec2271');
    const drift = byAddress('aws_security_group.web').find((x) => x.category === 'drift')!;
    expect(drift.risk).toBe('medium');
    expect((drift as unknown as { detail: string }).detail).toMatch(/alice/);
    const finding = await openFinding(a.tenant.id, 'security.sg_rdp_open', web.arn);
    expect(finding).toBeTruthy();
    expect(body.findings.fixes).toContainEqual(
      expect.objectContaining({ finding_id: finding!.id, address: 'aws_security_group.web', how: 'changed' }),
    );
  });

  it('gp2 → gp3 fixes the open finding; the cost delta is the sum of list-price deltas', async ({
    a,
    live,
    openFinding,
    price,
  }) => {
    const vol = await live(a.tenant.id, 'aws_ebs_volume', 'vol-aff93042cdef3fa83');
    const finding = await openFinding(a.tenant.id, 'finops.ebs_gp2_to_gp3', vol.arn);
    expect(finding).toBeTruthy();
    expect(body.findings.fixes).toContainEqual(
      expect.objectContaining({ finding_id: finding!.id, address: 'aws_ebs_volume.data', how: 'changed' }),
    );
    const size = Number((vol.attributes as Record<string, unknown>).size);
    const iops = Number((vol.attributes as Record<string, unknown>).iops);
    const gp3 =
      size * (await price('ebs:gp3:gb_month')) +
      Math.max(0, iops - 3000) * (await price('ebs:gp3:iops_month'));
    const volDelta = gp3 - size * (await price('ebs:gp2:gb_month'));
    const batch = (await price('ec2:m5.4xlarge:hour')) * 730;
    const dbBefore =
      (await price('rds:mysql:db.m5.large:single:hour')) * 730 +
      200 * (await price('rds:storage:gp2:single:gb_month'));
    const dbAfter =
      (await price('rds:mysql:db.m5.large:multi:hour')) * 730 +
      200 * (await price('rds:storage:gp2:multi:gb_month'));
    const nat = (await price('vpc:nat_gateway:hour')) * 730;
    const expected = volDelta + batch + (dbAfter - dbBefore) - nat;
    expect(body.cost.monthly_delta).toBeCloseTo(expected, 1);
    expect(body.cost.unpriced).toEqual([]);
    expect(byAddress('aws_instance.batch').find((x) => x.category === 'cost')!.risk).toBe('medium');
  });

  it('writes one audit entry with the plan digest and the overall risk', async ({ a, t }) => {
    const rows = await t.db
      .selectFrom('audit_log')
      .select(['target_id', 'details'])
      .where('tenant_id', '=', a.tenant.id)
      .where('action', '=', 'plan_review.reviewed')
      .execute();
    expect(rows.map((r) => r.target_id)).toContain(body.plan_digest);
    const entry = rows.find((r) => r.target_id === body.plan_digest)!;
    expect(entry.details).toMatchObject({ overall_risk: 'critical' });
  });

  it('isolation: another tenant’s identical environment is never cited', async ({ b, bWrite, t, review }) => {
    const other = await review({ plan: DEMO_PLAN }, bWrite);
    expect(other.status).toBe(200);
    const bArns = new Set(
      (await t.db.selectFrom('resources').select('arn').where('tenant_id', '=', b.tenant.id).execute()).map(
        (r) => r.arn,
      ),
    );
    // The demo's ARNs are the same in both tenants; ids (inventory row ids and finding ids) are not.
    const aIds = new Set([
      ...body.resources
        .filter((r: { live: unknown }) => r.live)
        .map((r: { live: { id: string } }) => r.live.id),
      ...body.findings.fixes.map((f: { finding_id: string }) => f.finding_id),
    ]);
    const bIds = [
      ...other.body.resources
        .filter((r: { live: unknown }) => r.live)
        .map((r: { live: { id: string } }) => r.live.id),
      ...other.body.findings.fixes.map((f: { finding_id: string }) => f.finding_id),
    ];
    expect(bIds.length).toBeGreaterThan(0);
    for (const id of bIds) expect(aIds.has(id)).toBe(false);
    const bRows = await t.db
      .selectFrom('resources')
      .select('id')
      .where('tenant_id', '=', b.tenant.id)
      .execute();
    const bRowIds = new Set(bRows.map((r) => r.id));
    for (const r of other.body.resources.filter((x: { live: unknown }) => x.live))
      expect(bRowIds.has(r.live.id)).toBe(true);
    expect(bArns.size).toBeGreaterThan(0);
    // A tenant with no environment gets no live matches at all.
    const c = await createTenantWithUser(t);
    const cWrite = (await mintTestToken(t, c, 'read_write')).token;
    const none = await review({ plan: DEMO_PLAN }, cWrite);
    expect(none.status).toBe(200);
    expect(none.body.resources.every((r: { live: unknown }) => r.live === null)).toBe(true);
    expect(none.body.findings.fixes).toEqual([]);
    for (const x of none.body.annotations)
      expect(x.citations.filter((c: { kind: string }) => c.kind !== 'plan_line')).toEqual([]);
  });

  it('the JSON of the same plan (terraform show -json) gives the same review', async ({ review }) => {
    const res = await review({ plan: readFileSync(`${REPO_ROOT}docs/examples/demo-plan.json`, 'utf8') });
    expect(res.status).toBe(200);
    expect(res.body.format).toBe('json');
    const same = (x: typeof body) => ({
      overall_risk: x.overall_risk,
      cost: x.cost,
      findings: x.findings,
      summary: { ...x.summary, terraform_summary: null },
      annotations: x.annotations.map((n: { citations: Array<{ kind: string; ref: string }> }) => ({
        ...n,
        citations: n.citations.filter((c) => c.kind !== 'plan_line'),
      })),
      // The JSON shows ARNs the text hides, so a match may come by ARN there: the same live resource.
      resources: x.resources.map((r: { live: Record<string, unknown> | null }) => ({
        ...r,
        plan_ref: null,
        live: r.live && { ...r.live, matched_by: null },
      })),
    });
    expect(same(res.body)).toEqual(same(body));
    expect(res.body.annotations[0].citations[0]).toEqual({ kind: 'plan_line', ref: '/resource_changes/1' });
  });

  it('the same plan with CI noise and colours gives the same review', async ({ review }) => {
    const noisy = [
      '2026-11-24T10:00:00.0000000Z ##[group]Run terraform plan',
      ...DEMO_PLAN.split('\n').map(
        (l) => `2026-11-24T10:00:01.0000000Z ${l.replace(/^(\s*)([+~-]) /, '$1\x1b[32m$2\x1b[0m ')}`,
      ),
      '2026-11-24T10:00:02.0000000Z ##[endgroup]',
    ].join('\n');
    const res = await review({ plan: noisy });
    expect(res.status).toBe(200);
    const strip = (x: typeof body) =>
      x.annotations.map((n: { citations: Array<{ kind: string; ref: string }> }) => ({
        ...n,
        citations: n.citations.filter((c) => c.kind !== 'plan_line'),
      }));
    expect(strip(res.body)).toEqual(strip(body));
    expect(res.body.overall_risk).toBe(body.overall_risk);
    expect(res.body.cost).toEqual(body.cost);
  });
});

describe('the CI script of docs/ci.md', () => {
  it('is the script docs/ci.md shows', () => {
    const doc = readFileSync(`${REPO_ROOT}docs/ci.md`, 'utf8');
    const block = /```sh\n(#!\/usr\/bin\/env bash[\s\S]*?)```/.exec(doc)![1];
    expect(block).toBe(readFileSync(script, 'utf8'));
  });

  it('prints the annotations and fails at the chosen risk; exit 2 when the review is refused', async ({
    skip,
    run,
    aWrite,
    aRead,
  }) => {
    if (spawnSync('sh', ['-c', 'command -v jq && command -v curl']).status !== 0) skip();
    const demo = await run(`${REPO_ROOT}docs/examples/demo-plan.txt`, aWrite, 'critical');
    expect(demo.status).toBe(1);
    expect(demo.stdout).toMatch(/^Overall risk: critical \| 3 to add, 2 to change, 2 to destroy/);
    expect(demo.stdout).toContain('[critical] destructive aws_db_instance.prod: Replaces prod-payments-db');
    expect(demo.stdout).toContain('cites: plan_line=L');
    const noChanges = `${REPO_ROOT}packages/core/src/plan-review/fixtures/no-changes.plan.txt`;
    const quiet = await run(noChanges, aWrite, 'low');
    expect(quiet.status, quiet.stderr).toBe(1); // low >= low
    expect((await run(noChanges, aWrite, 'medium')).status).toBe(0);
    const refused = await run(noChanges, aRead, 'critical');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/HTTP 403/);
  });
});

describe('hostile plans (issue 24): answered fast, off the event loop', () => {
  const HEAD =
    'Terraform will perform the following actions:\n\n  # aws_s3_bucket.b will be created\n  + resource "aws_s3_bucket" "b" {\n';
  const crafted = [
    `  # aws_s3_bucket.b will be created\n${' '.repeat(200_000)}x\n`,
    `${HEAD}${'\x1b]'.repeat(30_000)}\n  }\n`, // 210 KB as JSON, under the test's body limit
    `${HEAD}      + a = <<EOT\n  x\nEOT -> a${' '.repeat(200_000)}x\n  }\n`,
    `${HEAD}${'      + a {\n'.repeat(20_000)}`,
  ];

  it('each crafted plan is answered within a second (a review or a 400 naming the cap)', async ({
    review,
  }) => {
    await review({ plan: DEMO_PLAN }); // the parser's thread is up
    for (const plan of crafted) {
      const started = performance.now();
      const res = await review({ plan });
      expect(performance.now() - started).toBeLessThan(1000);
      expect([200, 400]).toContain(res.status);
    }
    const deep = await review({ plan: crafted[3] });
    expect(deep.body).toEqual({ detail: expect.stringMatching(/cap of 64 levels/) });
  });

  it('/healthz stays under 50 ms (median of the probes made while they are parsed)', async ({
    url,
    review,
  }) => {
    const probes: number[] = [];
    let parsing = true;
    const prober = (async () => {
      while (parsing) {
        const started = performance.now();
        await call(url, 'GET', '/healthz');
        probes.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    for (let round = 0; round < 3; round++) await Promise.all(crafted.map((plan) => review({ plan })));
    parsing = false;
    await prober;
    probes.sort((x, y) => x - y);
    expect(probes.length).toBeGreaterThan(3);
    expect(probes[Math.floor(probes.length / 2)]).toBeLessThan(50);
  });
});
