import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectEnvironment,
  installTool,
  notifyCriticalFindings,
  secretBoxFor,
  requestScan,
  runMorningReportJob,
  runScan,
} from '@opsi/core';
import { JobProducer } from '@opsi/jobs';
import { createLogger } from '@opsi/logger';
import { createRedis } from '@opsi/redis';
import {
  addUser,
  call,
  createTenantWithUser,
  createTestContext,
  mintTestToken,
  startTestApi,
  startTestWorker,
  testRedisUrl,
  type TestContext,
  type TestMember,
} from '@opsi/test-support';
import { SSRF_TARGETS } from '@opsi/test-support/hostile';
import type { RunningApi } from './server';

/** A local receiver: records every request, answers what `status` says for its path. */
interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
const statusFor: Record<string, number> = {};

let t: TestContext;
let api: RunningApi;
let worker: Awaited<ReturnType<typeof startTestWorker>>;
let producer: JobProducer;
let url: string;
let a: TestMember;
let c: TestMember;
let aWrite: string;
let aRead: string;
const logLines: string[] = [];
const capture = { write: (line: string) => void logLines.push(line) };

// Secrets that must never be answered or logged: the signing secret and the URL paths (a Slack
// webhook's path is its credential).
const webhookSecret = `whsec-${randomBytes(12).toString('hex')}`;
const hookPath = `/hooks/${randomBytes(8).toString('hex')}`;
const slackPath = `/services/T000/B000/${randomBytes(8).toString('hex')}`;
const failingPath = `/down/${randomBytes(8).toString('hex')}`;
const failingSecret = `fail-${randomBytes(12).toString('hex')}`;

const ATTEMPTS = 3;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(statusFor[req.url ?? ''] ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  statusFor[failingPath] = 500;

  // Test receivers on 127.0.0.1 are loopback, refused unless allowed; ::1 stays refused.
  t = await createTestContext({ LOG_LEVEL: 'trace', OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' });
  const logger = createLogger({ LOG_LEVEL: 'trace', LOG_FORMAT: 'json' }, {}, capture);
  api = await startTestApi(t, {}, logger);
  worker = await startTestWorker(
    t,
    {
      WORKER_QUEUES: ['reports', 'triage'],
      NOTIFY_ATTEMPTS: ATTEMPTS,
      NOTIFY_BACKOFF_MS: 20,
      NOTIFY_TIMEOUT_MS: 2000,
    },
    logger,
  );
  producer = new JobProducer(createRedis(testRedisUrl(), 'producer'), t.redisPrefix);
  url = api.url;
  a = await createTenantWithUser(t);
  c = await createTenantWithUser(t);
  await connectEnvironment(t.db, a.tenant.id, { kind: 'demo', seed: 42, size: 'small', epoch: '2026-11-01' });
  await runScan(t.db, (await requestScan(t.db, null, a.tenant.id, 'test')).id);
  aWrite = (await mintTestToken(t, a, 'read_write')).token;
  aRead = (await mintTestToken(t, a, 'read')).token;
}, 180_000);
afterAll(async () => {
  await worker?.close();
  await producer?.close();
  await api?.close();
  await t?.close();
  await new Promise((r) => receiver?.close(r));
});

const policy = { attempts: ATTEMPTS, backoffMs: 20, timeoutMs: 2000 };
const install = (body: unknown, token = aWrite) =>
  call(url, 'POST', '/api/v1/marketplace/tenant/tools', { token, body });

async function deliveries(tenantId: string, reportId: string) {
  return t.db
    .selectFrom('notifier_deliveries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('subject_id', '=', reportId)
    .orderBy('tool_id')
    .execute();
}

async function settle(tenantId: string, reportId: string, n: number) {
  for (let i = 0; i < 300; i++) {
    const rows = await deliveries(tenantId, reportId);
    if (rows.length === n && rows.every((r) => r.status !== 'pending')) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('deliveries did not settle');
}

function everythingSaid(): string {
  return logLines.join('\n');
}

describe('notifiers', () => {
  let reportId: string;

  it('installs a webhook and a Slack notifier (201); URL and secret are never answered', async () => {
    const hook = await install({
      tool_id: 'webhook',
      settings: { url: `${receiverUrl}${hookPath}`, secret: webhookSecret, events: ['report.morning'] },
    });
    expect(hook.status).toBe(201);
    expect(hook.body).toEqual({
      id: 'webhook',
      name: 'Webhook',
      category: 'notifiers',
      kind: 'notifier',
      status: 'active',
      installed_at: expect.any(String),
      settings: { url_hint: `${receiverUrl}/…`, events: ['report.morning'], signed: true },
    });
    const slack = await install({ tool_id: 'slack', settings: { url: `${receiverUrl}${slackPath}` } });
    expect(slack.status).toBe(201);
    expect(slack.body.settings.events).toEqual(['report.morning', 'finding.critical', 'incident.opened']);
    for (const res of [
      hook,
      slack,
      await call(url, 'GET', '/api/v1/marketplace/tenant/tools', { token: aRead }),
    ]) {
      expect(res.text).not.toContain(hookPath);
      expect(res.text).not.toContain(slackPath);
      expect(res.text).not.toContain(webhookSecret);
    }
    // At rest: encrypted.
    const rows = await t.db
      .selectFrom('tenant_tools')
      .selectAll()
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    for (const row of rows) {
      expect(row.secret_ciphertext).toMatch(/^v1:/);
      expect(JSON.stringify(row)).not.toContain(hookPath);
      expect(JSON.stringify(row)).not.toContain(slackPath);
      expect(JSON.stringify(row)).not.toContain(webhookSecret);
    }
  });

  it('delivers the morning report: a signed JSON POST that verifies, and a Block Kit message', async () => {
    const job = await runMorningReportJob(
      t.db,
      producer,
      { tenantId: a.tenant.id, periodTo: new Date(), requestedBy: 'test' },
      policy,
    );
    reportId = job.report_id;
    expect(job.deliveries).toBe(2);
    const rows = await settle(a.tenant.id, reportId, 2);
    expect(rows.map((r) => [r.tool_id, r.status, r.attempts, r.response_status])).toEqual([
      ['slack', 'delivered', 1, 200],
      ['webhook', 'delivered', 1, 200],
    ]);
    const hook = received.find((r) => r.path === hookPath)!;
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.headers['x-opsi-event']).toBe('report.morning');
    const ts = String(hook.headers['x-opsi-timestamp']);
    const expected = `sha256=${createHmac('sha256', webhookSecret).update(`${ts}.${hook.body}`).digest('hex')}`;
    expect(hook.headers['x-opsi-signature']).toBe(expected);
    const wrong = `sha256=${createHmac('sha256', 'another-secret-entirely').update(`${ts}.${hook.body}`).digest('hex')}`;
    expect(hook.headers['x-opsi-signature']).not.toBe(wrong);
    const envelope = JSON.parse(hook.body);
    expect(envelope).toMatchObject({
      id: rows[1]!.id,
      event: 'report.morning',
      tenant: { id: a.tenant.id, slug: a.tenant.slug },
      data: { report: { id: reportId, headline: expect.any(String), sections: expect.any(Object) } },
    });
    const latest = await call(url, 'GET', '/api/v1/reports/morning/latest', { token: aRead });
    expect(envelope.data.report.sections).toEqual(latest.body.sections);

    const slack = JSON.parse(received.find((r) => r.path === slackPath)!.body);
    expect(slack.text).toBe(`Morning report: ${latest.body.headline}`);
    expect(slack.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Morning report' } });
    expect(slack.blocks.map((b: { type: string }) => b.type)).toEqual(
      expect.arrayContaining(['header', 'section', 'context']),
    );
    expect(received.find((r) => r.path === slackPath)!.headers['x-opsi-signature']).toBeUndefined();
  });

  it('a retried report job delivers nothing twice', async () => {
    const before = received.length;
    const again = await runMorningReportJob(
      t.db,
      producer,
      { tenantId: a.tenant.id, periodTo: (await latestTo()) as Date, requestedBy: 'test' },
      policy,
    );
    expect(again).toMatchObject({ report_id: reportId, created: false, deliveries: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect(received.length).toBe(before);
  });

  it('a failing receiver is retried with backoff, then the delivery is recorded failed', async () => {
    const cWrite = (await mintTestToken(t, c, 'read_write')).token;
    expect(
      (
        await install(
          { tool_id: 'webhook', settings: { url: `${receiverUrl}${failingPath}`, secret: failingSecret } },
          cWrite,
        )
      ).status,
    ).toBe(201);
    const job = await runMorningReportJob(
      t.db,
      producer,
      { tenantId: c.tenant.id, periodTo: new Date(), requestedBy: 'test' },
      policy,
    );
    const [row] = await settle(c.tenant.id, job.report_id, 1);
    expect(row).toMatchObject({
      status: 'failed',
      attempts: ATTEMPTS,
      last_error: 'HTTP 500',
      response_status: 500,
    });
    expect(received.filter((r) => r.path === failingPath)).toHaveLength(ATTEMPTS);
    // The same delivery id each time, and the job ended failed in the queue.
    expect(
      new Set(received.filter((r) => r.path === failingPath).map((r) => r.headers['x-opsi-delivery'])),
    ).toEqual(new Set([row!.id]));
    const queued = await producer.queue('reports').getJob(`deliver-${row!.id}`);
    expect(await queued!.getState()).toBe('failed');
    expect(queued!.attemptsMade).toBe(ATTEMPTS);
  });

  it('the critical findings a scan opens go to notifiers subscribed to finding.critical, once', async () => {
    const d = await createTenantWithUser(t);
    const dWrite = (await mintTestToken(t, d, 'read_write')).token;
    const criticalPath = `/critical/${randomBytes(6).toString('hex')}`;
    expect(
      (
        await install(
          {
            tool_id: 'webhook',
            settings: {
              url: `${receiverUrl}${criticalPath}`,
              secret: webhookSecret,
              events: ['finding.critical'],
            },
          },
          dWrite,
        )
      ).status,
    ).toBe(201);
    await connectEnvironment(t.db, d.tenant.id, {
      kind: 'demo',
      seed: 7,
      size: 'small',
      epoch: '2026-11-01',
    });
    const scan = await runScan(t.db, (await requestScan(t.db, null, d.tenant.id, 'test')).id);
    const critical = await t.db
      .selectFrom('findings')
      .select('id')
      .where('tenant_id', '=', d.tenant.id)
      .where('severity', '=', 'critical')
      .where('status', '=', 'open')
      .execute();
    expect(critical.length).toBeGreaterThan(0);
    expect(await notifyCriticalFindings(t.db, producer, d.tenant.id, scan.id, policy)).toBe(critical.length);
    for (let i = 0; i < 200 && received.filter((r) => r.path === criticalPath).length < critical.length; i++)
      await new Promise((r) => setTimeout(r, 50));
    const got = received.filter((r) => r.path === criticalPath).map((r) => JSON.parse(r.body));
    expect(got.map((e) => e.event)).toEqual(critical.map(() => 'finding.critical'));
    expect(got.map((e) => e.data.finding.id).sort()).toEqual(critical.map((f) => f.id).sort());
    // Asking again delivers nothing more; a morning report is not for this notifier.
    expect(await notifyCriticalFindings(t.db, producer, d.tenant.id, scan.id, policy)).toBe(0);
    const report = await runMorningReportJob(
      t.db,
      producer,
      { tenantId: d.tenant.id, periodTo: new Date(), requestedBy: 'test' },
      policy,
    );
    expect(report.deliveries).toBe(0);
  });

  it('an incident opened by triage goes to notifiers subscribed to incident.opened, once', async () => {
    const e = await createTenantWithUser(t);
    const eWrite = (await mintTestToken(t, e, 'read_write')).token;
    const incidentPath = `/incident/${randomBytes(6).toString('hex')}`;
    const hook = await install(
      {
        tool_id: 'webhook',
        settings: {
          url: `${receiverUrl}${incidentPath}`,
          secret: webhookSecret,
          events: ['incident.opened'],
        },
      },
      eWrite,
    );
    expect(hook.status).toBe(201);
    await connectEnvironment(t.db, e.tenant.id, {
      kind: 'demo',
      seed: 9,
      size: 'small',
      epoch: '2026-11-01',
    });
    await runScan(t.db, (await requestScan(t.db, null, e.tenant.id, 'test')).id);
    const resource = await t.db
      .selectFrom('resources')
      .select('arn')
      .where('tenant_id', '=', e.tenant.id)
      .where('deleted_at', 'is', null)
      .orderBy('arn')
      .limit(1)
      .executeTakeFirstOrThrow();
    const post = (body: unknown) => call(url, 'POST', '/api/v1/triage/alerts', { token: eWrite, body });
    const opened = await post({
      title: 'Checkout latency',
      severity: 'critical',
      source: 'grafana',
      fingerprint: 'fp-notify-1',
      resource: resource.arn,
    });
    expect(opened.status).toBe(202);
    expect(opened.body.events).toEqual([
      { id: expect.any(Number), action: 'incident_opened', incident_id: expect.any(String) },
    ]);
    const incidentId = opened.body.events[0].incident_id as string;
    expect((await settle(e.tenant.id, incidentId, 1)).map((r) => r.status)).toEqual(['delivered']);
    const got = received.filter((r) => r.path === incidentPath);
    expect(got).toHaveLength(1);
    const ts = String(got[0]!.headers['x-opsi-timestamp']);
    expect(got[0]!.headers['x-opsi-event']).toBe('incident.opened');
    expect(got[0]!.headers['x-opsi-signature']).toBe(
      `sha256=${createHmac('sha256', webhookSecret).update(`${ts}.${got[0]!.body}`).digest('hex')}`,
    );
    expect(JSON.parse(got[0]!.body)).toMatchObject({
      event: 'incident.opened',
      tenant: { id: e.tenant.id },
      data: { incident: { incident_id: incidentId, title: expect.stringContaining('Checkout latency') } },
    });
    // A second alert on the same resource joins the incident: nothing more is delivered (the triage job
    // has finished, deliveries queued, when the API answers).
    const joined = await post({
      title: 'Checkout errors',
      severity: 'critical',
      source: 'grafana',
      fingerprint: 'fp-notify-2',
      resource: resource.arn,
    });
    expect(joined.body.events).toEqual([
      { id: expect.any(Number), action: 'correlated', incident_id: incidentId },
    ]);
    const rows = await t.db
      .selectFrom('notifier_deliveries')
      .select(['event_kind', 'subject_id', 'status'])
      .where('tenant_id', '=', e.tenant.id)
      .execute();
    expect(rows).toEqual([{ event_kind: 'incident.opened', subject_id: incidentId, status: 'delivered' }]);
    expect(received.filter((r) => r.path === incidentPath)).toHaveLength(1);
  });

  it('refuses URLs that reach loopback, link-local, private, ULA, multicast or metadata addresses (400 naming the rule)', async () => {
    const before = await t.db
      .selectFrom('tenant_tools')
      .select('tool_id')
      .where('tenant_id', '=', c.tenant.id)
      .execute();
    const cWrite = (await mintTestToken(t, c, 'read_write')).token;
    for (const [target, rule] of SSRF_TARGETS) {
      const res = await install({ tool_id: 'slack', settings: { url: target } }, cWrite);
      expect(res.status, target).toBe(400);
      expect(res.body.detail, target).toMatch(rule);
    }
    expect(
      await t.db.selectFrom('tenant_tools').select('tool_id').where('tenant_id', '=', c.tenant.id).execute(),
    ).toEqual(before);
  });

  it('refuses at delivery time too: a notifier that now reaches a refused address is recorded failed, nothing sent', async () => {
    // A receiver on ::1 (refused by the worker, whose allow-list has only 127.0.0.1/32); the notifier is
    // installed past the API's check, as one whose name later resolves elsewhere would be.
    const hits: string[] = [];
    const v6 = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((r) => v6.listen(0, '::1', r));
    try {
      const f = await createTenantWithUser(t);
      await installTool(
        t.db,
        secretBoxFor(t.config),
        f.tenant.id,
        { type: 'operator', id: null },
        { tool_id: 'slack', url: `http://[::1]:${(v6.address() as AddressInfo).port}/rebound` },
        { allowCidrs: ['::1/128'] },
      );
      const job = await runMorningReportJob(
        t.db,
        producer,
        { tenantId: f.tenant.id, periodTo: new Date(), requestedBy: 'test' },
        policy,
      );
      const [row] = await settle(f.tenant.id, job.report_id, 1);
      expect(row).toMatchObject({ status: 'failed', attempts: 1, response_status: null });
      expect(row!.last_error).toMatch(/refused: ::1 is a loopback address/);
      expect(hits).toEqual([]);
    } finally {
      await new Promise((r) => v6.close(r));
    }
  });

  it('no secret in any log line', () => {
    const said = everythingSaid();
    expect(said).toContain('job failed'); // the failing deliveries were logged…
    for (const secret of [webhookSecret, failingSecret, hookPath, slackPath, failingPath])
      expect(said, secret).not.toContain(secret); // …without their targets
  });
});

async function latestTo() {
  const r = await t.db
    .selectFrom('morning_reports')
    .select('period_to')
    .where('tenant_id', '=', a.tenant.id)
    .orderBy('period_to', 'desc')
    .executeTakeFirstOrThrow();
  return r.period_to;
}

describe('installing: 400s, roles, isolation', () => {
  it('bad input is 400 {detail} and installs nothing', async () => {
    const before = await t.db
      .selectFrom('tenant_tools')
      .select('tool_id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    for (const body of [
      {},
      { tool_id: 'nope' },
      { tool_id: 'webhook' },
      { tool_id: 'webhook', settings: { url: 'not a url', secret: webhookSecret } },
      { tool_id: 'webhook', settings: { url: 'ftp://example.com/x', secret: webhookSecret } },
      { tool_id: 'webhook', settings: { url: 'https://u:p@example.com/x', secret: webhookSecret } },
      { tool_id: 'webhook', settings: { url: 'https://example.com/x' } },
      { tool_id: 'webhook', settings: { url: 'https://example.com/x', secret: 'short' } },
      { tool_id: 'slack', settings: { url: 'https://example.com/x', events: ['report.evening'] } },
      { tool_id: 'slack', settings: { url: 'https://example.com/x', events: [] } },
      { tool_id: 'slack', settings: { url: 'https://example.com/x', colour: 'red' } },
      { tool_id: 'alertmanager', settings: { url: 'https://example.com/x' } },
      { tool_id: 'cloudwatch_sns', settings: { events: ['report.morning'] } },
    ]) {
      const res = await install(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    for (const tool_id of ['aws', 'agent.list_findings']) {
      const res = await install({ tool_id });
      expect(res.status, tool_id).toBe(409);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    const after = await t.db
      .selectFrom('tenant_tools')
      .select('tool_id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    expect(after).toEqual(before);
  });

  it('only owners and admins install and remove; a read token gets 403; members 403', async () => {
    const member = await addUser(t, a, 'member');
    const memberWrite = (await mintTestToken(t, member, 'read_write')).token;
    expect((await install({ tool_id: 'alertmanager' }, memberWrite)).status).toBe(403);
    expect((await install({ tool_id: 'alertmanager' }, aRead)).status).toBe(403);
    const admin = await addUser(t, a, 'admin');
    const adminWrite = (await mintTestToken(t, admin, 'read_write')).token;
    const res = await install({ tool_id: 'alertmanager' }, adminWrite);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: 'alertmanager',
      kind: 'alert_source',
      status: 'active',
      settings: {},
    });
    // Again: reconfigured, 200.
    expect((await install({ tool_id: 'alertmanager' }, adminWrite)).status).toBe(200);
    const del = (id: string, token: string) =>
      call(url, 'DELETE', `/api/v1/marketplace/tenant/tools/${id}`, { token });
    expect((await del('alertmanager', memberWrite)).status).toBe(403);
    expect((await del('alertmanager', aRead)).status).toBe(403);
    const cWrite = (await mintTestToken(t, c, 'read_write')).token;
    expect((await del('alertmanager', cWrite)).status).toBe(404); // C never installed it
    expect((await del('alertmanager', adminWrite)).status).toBe(204);
    expect((await del('alertmanager', adminWrite)).status).toBe(404);
    expect((await del('agent.list_findings', adminWrite)).status).toBe(409);
    const audit = await call(url, 'GET', '/api/v1/audit?limit=3', { token: aRead });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'tool.removed',
      'tool.reconfigured',
      'tool.installed',
    ]);
  });

  it('a removed notifier gets nothing; another tenant’s notifiers never see this tenant’s reports', async () => {
    const cDeliveries = await t.db
      .selectFrom('notifier_deliveries')
      .select('subject_id')
      .where('tenant_id', '=', c.tenant.id)
      .execute();
    const aReports = await t.db
      .selectFrom('morning_reports')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    expect(cDeliveries.map((d) => d.subject_id)).not.toEqual(
      expect.arrayContaining(aReports.map((r) => r.id)),
    );
    expect(
      (await call(url, 'DELETE', '/api/v1/marketplace/tenant/tools/slack', { token: aWrite })).status,
    ).toBe(204);
    const job = await runMorningReportJob(
      t.db,
      producer,
      { tenantId: a.tenant.id, periodTo: new Date(), requestedBy: 'test' },
      policy,
    );
    const rows = await settle(a.tenant.id, job.report_id, 1);
    expect(rows.map((r) => r.tool_id)).toEqual(['webhook']);
  });
});
