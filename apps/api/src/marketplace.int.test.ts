import { describe, expect } from 'vitest';
import { BUILT_IN_RUNBOOKS, connectEnvironment, requestScan, runbookForFinding, runScan } from '@opsi/core';
import { DETECTORS } from '@opsi/detectors';
import { call } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

const it = apiTest
  .extend(
    'runbooks',
    async ({ url, aRead }) =>
      (query = '', token = aRead) =>
        call(url, 'GET', `/api/v1/runbooks${query}`, { token }),
  )
  .extend(
    'write',
    async ({ url, aWrite }) =>
      (body: unknown, token = aWrite) =>
        call(url, 'POST', '/api/v1/runbooks', { token, body }),
  );

// Tenant A has the demo environment (seed 42), scanned; tenant B has nothing.
it.beforeAll(async ({ t, a }) => {
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await runScan(t.db, (await requestScan(t.db, null, a.tenant.id, 'test')).id);
}, 120_000);

describe('integrations catalog', () => {
  it('lists connectors, alert sources, notifiers and agent tools, with installed for the tenant', async ({
    url,
    aRead,
    bWrite,
  }) => {
    const res = await call(url, 'GET', '/api/v1/marketplace/tools', { token: aRead });
    expect(res.status).toBe(200);
    const tools = res.body.tools as Array<{ id: string; kind: string; installed: boolean }>;
    for (const tool of tools)
      expect(tool).toEqual({
        id: expect.any(String),
        name: expect.any(String),
        category: expect.any(String),
        description: expect.any(String),
        kind: expect.stringMatching(/^(connector|notifier|agent_tool|alert_source)$/),
        installed: expect.any(Boolean),
      });
    const byId = new Map(tools.map((x) => [x.id, x]));
    for (const id of ['demo', 'terraform_state', 'aws', 'alertmanager', 'cloudwatch_sns', 'webhook', 'slack'])
      expect(byId.has(id), id).toBe(true);
    const tools2 = await call(url, 'GET', '/api/v1/tools/available', { token: aRead });
    for (const agentTool of tools2.body.tools as Array<{ name: string }>)
      expect(byId.get(`agent.${agentTool.name}`)).toMatchObject({ kind: 'agent_tool', installed: true });
    expect(byId.get('demo')!.installed).toBe(true); // A's connection
    expect(byId.get('aws')!.installed).toBe(false);
    expect(byId.get('webhook')!.installed).toBe(false);
    // B has no environment.
    const ofB = (await call(url, 'GET', '/api/v1/marketplace/tools', { token: bWrite })).body.tools;
    expect(ofB.find((x: { id: string }) => x.id === 'demo').installed).toBe(false);
  });

  it('tenant tools: the connection, installed integrations with status, built-in agent tools; isolated', async ({
    url,
    aRead,
    aWrite,
    bWrite,
  }) => {
    expect(
      (
        await call(url, 'POST', '/api/v1/marketplace/tenant/tools', {
          token: aWrite,
          body: { tool_id: 'cloudwatch_sns' },
        })
      ).status,
    ).toBe(201);
    const res = await call(url, 'GET', '/api/v1/marketplace/tenant/tools', { token: aRead });
    expect(res.status).toBe(200);
    const tools = res.body.tools as Array<{ id: string; status: string }>;
    expect(tools.find((x) => x.id === 'demo')).toEqual({
      id: 'demo',
      name: 'Demo environment',
      category: 'connectors',
      kind: 'connector',
      status: 'connected',
      installed_at: expect.any(String),
      settings: {},
    });
    expect(tools.find((x) => x.id === 'cloudwatch_sns')).toMatchObject({
      status: 'active',
      kind: 'alert_source',
    });
    expect(tools.find((x) => x.id === 'agent.list_findings')).toMatchObject({
      status: 'built_in',
      installed_at: null,
    });
    const ofB = (await call(url, 'GET', '/api/v1/marketplace/tenant/tools', { token: bWrite })).body.tools;
    expect(ofB.map((x: { id: string }) => x.id)).not.toContain('cloudwatch_sns');
    expect(ofB.map((x: { id: string }) => x.id)).not.toContain('demo');
    expect(
      (await call(url, 'DELETE', '/api/v1/marketplace/tenant/tools/cloudwatch_sns', { token: bWrite }))
        .status,
    ).toBe(404);
    expect((await call(url, 'GET', '/api/v1/marketplace/tenant/tools')).status).toBe(401);
  });
});

describe('runbooks', () => {
  it('built-in runbooks cover every detector family, each check once', async ({ runbooks }) => {
    const res = await runbooks('?source=built_in');
    expect(res.status).toBe(200);
    expect(res.body.runbooks).toHaveLength(BUILT_IN_RUNBOOKS.length);
    const covered = res.body.runbooks.flatMap(
      (r: { applies_to: { detectors: string[] } }) => r.applies_to.detectors,
    );
    expect([...covered].sort()).toEqual(DETECTORS.map((d) => d.id).sort());
    expect(res.body.runbooks[0]).toEqual({
      id: expect.stringMatching(/^builtin:/),
      title: expect.any(String),
      service: null,
      applies_to: { detectors: expect.any(Array), resource_types: expect.any(Array), alert_fingerprints: [] },
      steps: expect.arrayContaining([expect.any(String)]),
      source: 'built_in',
      created_by: null,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/),
    });
    // Every runbook has a date; a built-in one's is when its text last changed, not the request time.
    for (const r of res.body.runbooks) expect(Date.parse(r.updated_at)).toBeLessThan(Date.now() - 60_000);
    const again = await runbooks('?source=built_in');
    expect(again.body.runbooks.map((r: { updated_at: string }) => r.updated_at)).toEqual(
      res.body.runbooks.map((r: { updated_at: string }) => r.updated_at),
    );
    expect(res.body.runbooks.find((r: { id: string }) => r.id === 'builtin:alarms').updated_at).toBe(
      BUILT_IN_RUNBOOKS.find((r) => r.id === 'builtin:alarms')!.updated_at.toISOString(),
    );
  });

  it('POST writes a tenant runbook (201); GET lists it first; service filters; audit-logged', async ({
    url,
    a,
    aRead,
    runbooks,
    write,
  }) => {
    const res = await write({
      title: '  Payments DB: restore from snapshot ',
      service: 'payments',
      applies_to: { detectors: ['sre.rds_no_backups'], alert_fingerprints: ['abc123'] },
      steps: ['Page the payments on-call.', 'Restore the latest snapshot into a new instance.'],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Payments DB: restore from snapshot',
      service: 'payments',
      applies_to: { detectors: ['sre.rds_no_backups'], resource_types: [], alert_fingerprints: ['abc123'] },
      steps: ['Page the payments on-call.', 'Restore the latest snapshot into a new instance.'],
      source: 'tenant',
      created_by: `user:${a.user.email}`,
      updated_at: expect.any(String),
    });
    const all = (await runbooks()).body.runbooks;
    expect(all[0].id).toBe(res.body.id);
    expect(
      (await runbooks('?service=checkout')).body.runbooks.map((r: { id: string }) => r.id),
    ).not.toContain(res.body.id);
    expect((await runbooks('?service=PAYMENTS')).body.runbooks[0].id).toBe(res.body.id);
    expect((await runbooks('?source=tenant')).body.runbooks.map((r: { id: string }) => r.id)).toEqual([
      res.body.id,
    ]);
    const audit = await call(url, 'GET', '/api/v1/audit?limit=1', { token: aRead });
    expect(audit.body.entries[0]).toMatchObject({ action: 'runbook.created', target_id: res.body.id });
  });

  it('matches a finding to its runbook: the built-in one of its detector family; a tenant one for its service wins', async ({
    url,
    a,
    aRead,
    bWrite,
    t,
  }) => {
    const findings = (await call(url, 'GET', '/api/v1/pulse/findings', { token: aRead })).body
      .findings as Array<{
      id: string;
      check_id: string;
    }>;
    const ssh = findings.find((f) => f.check_id === 'security.sg_ssh_open')!;
    const matched = await call(url, 'GET', `/api/v1/runbooks?finding_id=${ssh.id}`, { token: aRead });
    expect(matched.body.runbooks[0]).toMatchObject({ id: 'builtin:network-exposure' });
    expect((await runbookForFinding(t.db, a.tenant.id, ssh.id))!.id).toBe('builtin:network-exposure');
    // The payments DB without backups: the tenant's payments runbook comes before the built-in one.
    const backups = findings.find((f) => f.check_id === 'sre.rds_no_backups')!;
    const forBackups = (await call(url, 'GET', `/api/v1/runbooks?finding_id=${backups.id}`, { token: aRead }))
      .body.runbooks as Array<{ id: string; source: string }>;
    expect(forBackups[0]!.source).toBe('tenant');
    expect(forBackups.map((r) => r.id)).toContain('builtin:database-resilience');
    // Another tenant's finding id is 404, like an unknown one.
    expect((await call(url, 'GET', `/api/v1/runbooks?finding_id=${ssh.id}`, { token: bWrite })).status).toBe(
      404,
    );
  });

  it('bad input is 400 {detail}; read tokens 403; isolation', async ({
    url,
    aRead,
    bWrite,
    runbooks,
    write,
  }) => {
    const before = (await runbooks('?source=tenant')).body.runbooks.length;
    for (const body of [
      {},
      { title: 'x' },
      { title: 'x', steps: [] },
      { title: '', steps: ['a'] },
      { title: 'x', steps: [''] },
      { title: 'x', steps: ['a'], applies_to: { detectors: 'sre.x' } },
      { title: 'x', steps: ['a'], applies_to: { services: ['x'] } },
      { title: 'x', steps: ['a'], extra: true },
      { title: 'x'.repeat(201), steps: ['a'] },
    ]) {
      const res = await write(body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await runbooks('?finding_id=nope')).status).toBe(400);
    expect((await runbooks('?source=mine')).status).toBe(400);
    expect((await write({ title: 'x', steps: ['a'] }, aRead)).status).toBe(403);
    expect((await runbooks('?source=tenant')).body.runbooks.length).toBe(before);
    expect((await runbooks('?source=tenant', bWrite)).body.runbooks).toEqual([]);
    expect((await call(url, 'GET', '/api/v1/runbooks')).status).toBe(401);
  });
});
