import { describe, expect } from 'vitest';
import {
  appendTimelineEvent,
  connectEnvironment,
  requestScan,
  runScan,
  timelineTransaction,
  triageInventoryAlerts,
} from '@opsi/core';
import { TimelineLog } from '@opsi/jobs';
import { call, createTenantWithUser, mintTestToken, readSse, type SseEvent } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// Tenant A has a daily agent budget of 2; a free-tier tenant beside A and B.
const it = apiTest
  .override({
    workerConfig: { AGENT_ENGINE: 'builtin', WORKER_QUEUES: ['agent', 'triage'] },
    aOptions: { budget: 2 },
  })
  .extend(
    'open',
    async ({ url, aWrite }) =>
      (body: unknown, token = aWrite) =>
        call(url, 'POST', '/api/v1/incidents', { token, body }),
  )
  .extend(
    'timeline',
    async ({ url, aRead }) =>
      (id: string, q = '', token = aRead) =>
        call(url, 'GET', `/api/v1/incidents/${id}/timeline${q}`, { token }),
  )
  // Triage: alerts posted, and the size of tenant B's triage inbox.
  .extend(
    'post',
    async ({ url, aWrite }) =>
      (body: unknown, token = aWrite) =>
        call(url, 'POST', '/api/v1/triage/alerts', { token, body }),
  )
  .extend(
    'inbox',
    async ({ t, b }) =>
      async () =>
        (await t.db.selectFrom('triage_inbox').select('id').where('tenant_id', '=', b.tenant.id).execute())
          .length,
  );

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);
describe('incidents', () => {
  let first: Record<string, any>;

  it('POST opens one: 201, SEV3 by default, status open, source manual, exactly one created event', async ({
    a,
    open,
    timeline,
  }) => {
    const res = await open({ title: '  Checkout is slow ', description: 'p99 up' });
    expect(res.status).toBe(201);
    first = res.body;
    expect(first).toEqual({
      id: UUID,
      title: 'Checkout is slow',
      severity: 'SEV3',
      status: 'open',
      description: 'p99 up',
      created_at: ISO,
      updated_at: ISO,
      resolved_at: null,
      started_at: ISO,
      source: 'manual',
      created_by: `user:${a.user.email}`,
      resources: [],
      war_room: null,
      recurrence_of: null,
      alert_count: 0,
    });
    const tl = await timeline(first.id);
    expect(tl.status).toBe(200);
    expect(tl.body.events).toEqual([
      {
        id: expect.any(Number),
        incident_id: first.id,
        kind: 'created',
        body: expect.stringContaining('Checkout is slow'),
        actor: `user:${a.user.email}`,
        created_at: ISO,
        data: { severity: 'SEV3', source: 'manual' },
      },
    ]);
    expect((await open({ title: 'DNS down', severity: 'SEV2' })).body.severity).toBe('SEV2');
  });

  it('GET lists newest first with filters, limit and offset; GET by id; another tenant sees nothing', async ({
    url,
    aRead,
    bWrite,
    open,
  }) => {
    await open({ title: 'Disk full', severity: 'SEV1' });
    const all = await call(url, 'GET', '/api/v1/incidents', { token: aRead });
    expect(all.status).toBe(200);
    expect(all.body.incidents.map((i: any) => i.title)).toEqual([
      'Disk full',
      'DNS down',
      'Checkout is slow',
    ]);
    const sev1 = await call(url, 'GET', '/api/v1/incidents?severity=SEV1', { token: aRead });
    expect(sev1.body.incidents.map((i: any) => i.title)).toEqual(['Disk full']);
    const page = await call(url, 'GET', '/api/v1/incidents?limit=1&offset=1', { token: aRead });
    expect(page.body.incidents.map((i: any) => i.title)).toEqual(['DNS down']);
    expect(
      (await call(url, 'GET', '/api/v1/incidents?status=open', { token: aRead })).body.incidents,
    ).toHaveLength(3);
    const one = await call(url, 'GET', `/api/v1/incidents/${first.id}`, { token: aRead });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first);
    expect((await call(url, 'GET', '/api/v1/incidents', { token: bWrite })).body).toEqual({ incidents: [] });
    for (const path of ['', '/timeline', '/timeline/stream']) {
      const res = await call(url, 'GET', `/api/v1/incidents/${first.id}${path}`, { token: bWrite });
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    for (const [method, path, body] of [
      ['PATCH', '', { status: 'resolved' }],
      ['POST', '/timeline', { body: 'x' }],
      ['POST', '/agent-investigate', undefined],
      ['POST', '/war-room', undefined],
    ] as const) {
      const res = await call(url, method, `/api/v1/incidents/${first.id}${path}`, { token: bWrite, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(
      (await call(url, 'GET', `/api/v1/incidents/${crypto.randomUUID()}`, { token: aRead })).status,
    ).toBe(404);
  });

  it('bad input is 400 {detail} and changes nothing', async ({
    url,
    a,
    aRead,
    aWrite,
    t,
    open,
    timeline,
  }) => {
    const before = await t.db
      .selectFrom('incidents')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    for (const body of [
      {},
      { title: '' },
      { title: 'x', severity: 'SEV5' },
      { title: 'x', severity: 'critical' },
    ]) {
      const res = await open(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    for (const q of ['?severity=SEV0', '?status=closed', '?limit=0', '?limit=501', '?offset=-1']) {
      expect((await call(url, 'GET', `/api/v1/incidents${q}`, { token: aRead })).status, q).toBe(400);
    }
    for (const body of [{}, { status: 'closed' }, { severity: 'SEV9' }, { title: '' }]) {
      const res = await call(url, 'PATCH', `/api/v1/incidents/${first.id}`, { token: aWrite, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(url, 'GET', '/api/v1/incidents/not-a-uuid', { token: aRead })).status).toBe(404);
    expect((await timeline(first.id, '?after_id=-1')).status).toBe(400);
    expect(
      (
        await call(url, 'POST', `/api/v1/incidents/${first.id}/timeline`, {
          token: aWrite,
          body: { body: ' ' },
        })
      ).status,
    ).toBe(400);
    const after = await t.db
      .selectFrom('incidents')
      .select('id')
      .where('tenant_id', '=', a.tenant.id)
      .execute();
    expect(after).toHaveLength(before.length);
    expect((await timeline(first.id)).body.events).toHaveLength(1);
  });

  it('a read token is refused on every write (403)', async ({ url, aRead }) => {
    for (const [method, path, body] of [
      ['POST', '/api/v1/incidents', { title: 'x' }],
      ['PATCH', `/api/v1/incidents/${first.id}`, { status: 'resolved' }],
      ['POST', `/api/v1/incidents/${first.id}/timeline`, { body: 'note' }],
      ['POST', `/api/v1/incidents/${first.id}/agent-investigate`, undefined],
      ['POST', `/api/v1/incidents/${first.id}/war-room`, undefined],
      ['POST', '/api/v1/triage/alerts', { title: 'x', severity: 'high', source: 'test' }],
    ] as const) {
      const res = await call(url, method, path, { token: aRead, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await call(url, 'GET', '/api/v1/incidents', {})).status).toBe(401);
  });

  it('PATCH changes and writes one event per change; after_id returns exactly what came after', async ({
    url,
    a,
    aWrite,
    timeline,
  }) => {
    const res = await call(url, 'PATCH', `/api/v1/incidents/${first.id}`, {
      token: aWrite,
      body: { status: 'investigating', severity: 'SEV2' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'investigating', severity: 'SEV2', resolved_at: null });
    const same = await call(url, 'PATCH', `/api/v1/incidents/${first.id}`, {
      token: aWrite,
      body: { status: 'investigating' },
    });
    expect(same.status).toBe(200);
    const resolved = await call(url, 'PATCH', `/api/v1/incidents/${first.id}`, {
      token: aWrite,
      body: { status: 'resolved', title: 'Checkout was slow' },
    });
    expect(resolved.body).toMatchObject({ status: 'resolved', title: 'Checkout was slow', resolved_at: ISO });
    const note = await call(url, 'POST', `/api/v1/incidents/${first.id}/timeline`, {
      token: aWrite,
      body: { body: 'Rolled back deploy 42.' },
    });
    expect(note.status).toBe(201);
    expect(note.body).toEqual({
      id: expect.any(Number),
      incident_id: first.id,
      kind: 'note',
      body: 'Rolled back deploy 42.',
      actor: `user:${a.user.email}`,
      created_at: ISO,
      data: {},
    });
    const events = (await timeline(first.id)).body.events as Array<{ id: number; kind: string }>;
    expect(events.map((e) => e.kind)).toEqual([
      'created',
      'status_changed',
      'severity_changed',
      'status_changed',
      'title_changed',
      'note',
    ]);
    const ids = events.map((e) => e.id);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const after = (await timeline(first.id, `?after_id=${ids[i]}`)).body.events;
      expect(after.map((e: { id: number }) => e.id)).toEqual(ids.slice(i + 1));
    }
    expect((await timeline(first.id, '?after_id=0')).body.events).toHaveLength(ids.length);
  });

  it('the live timeline: replays after Last-Event-ID, then streams new events in order', async ({
    url,
    aRead,
    aWrite,
    open,
    timeline,
  }) => {
    const created = (await open({ title: 'Live one' })).body;
    const firstEvent = (await timeline(created.id)).body.events[0].id as number;
    const seen: SseEvent[] = [];
    let opened!: () => void;
    const ready = new Promise<void>((r) => (opened = r));
    const reading = readSse(`${url}/api/v1/incidents/${created.id}/timeline/stream?after_id=0`, {
      token: aRead,
      onOpen: () => opened(),
      onEvent: (e) => seen.push(e),
      stopAfter: (events) => events.length >= 4,
      timeoutMs: 20_000,
    });
    await ready;
    await call(url, 'POST', `/api/v1/incidents/${created.id}/timeline`, {
      token: aWrite,
      body: { body: 'one' },
    });
    await call(url, 'PATCH', `/api/v1/incidents/${created.id}`, {
      token: aWrite,
      body: { status: 'mitigated' },
    });
    await call(url, 'POST', `/api/v1/incidents/${created.id}/timeline`, {
      token: aWrite,
      body: { body: 'two' },
    });
    const result = await reading;
    expect(result.status).toBe(200);
    expect(result.events.map((e) => [e.event, e.data.body ?? ''])).toEqual([
      ['created', expect.any(String)],
      ['note', 'one'],
      ['status_changed', 'Status changed from open to mitigated.'],
      ['note', 'two'],
    ]);
    expect(result.events[0]!.id).toBe(firstEvent);
    expect(result.events.map((e) => e.id)).toEqual(result.events.map((e) => e.data.id));
    const stored = (await timeline(created.id)).body.events.map((e: { id: number }) => e.id);
    expect(result.events.map((e) => e.id)).toEqual(stored);
    // Resume: Last-Event-ID wins over after_id and replays exactly what came after it.
    const resumed = await readSse(`${url}/api/v1/incidents/${created.id}/timeline/stream?after_id=0`, {
      token: aRead,
      headers: { 'last-event-id': String(stored[1]) },
      stopAfter: (events) => events.length >= 2,
      timeoutMs: 20_000,
    });
    expect(resumed.events.map((e) => e.id)).toEqual(stored.slice(2));
    const bad = await readSse(`${url}/api/v1/incidents/${created.id}/timeline/stream`, {
      token: aRead,
      headers: { 'last-event-id': 'x' },
    });
    expect(bad.status).toBe(400);
  });

  it('war room: 201 when opened, 200 after, one war_room_opened event; 402 for a free tenant', async ({
    url,
    a,
    aRead,
    aWrite,
    freeWrite,
    open,
    timeline,
  }) => {
    const inc = (await open({ title: 'Room for this' })).body;
    const opened = await call(url, 'POST', `/api/v1/incidents/${inc.id}/war-room`, { token: aWrite });
    expect(opened.status).toBe(201);
    expect(opened.body).toEqual({
      id: UUID,
      incident_id: inc.id,
      session_id: UUID,
      created_at: ISO,
      participants: [{ user_id: a.user.id, name: a.user.name }],
    });
    const again = await call(url, 'POST', `/api/v1/incidents/${inc.id}/war-room`, { token: aWrite });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(opened.body);
    const kinds = (await timeline(inc.id)).body.events.map((e: { kind: string }) => e.kind);
    expect(kinds.filter((k: string) => k === 'war_room_opened')).toHaveLength(1);
    expect((await call(url, 'GET', `/api/v1/incidents/${inc.id}`, { token: aRead })).body.war_room).toEqual({
      id: opened.body.id,
      session_id: opened.body.session_id,
    });
    // The room's agent session knows the incident.
    const ask = await call(url, 'POST', '/api/v1/ask', {
      token: aWrite,
      body: { prompt: 'What is happening in this incident?', session_id: opened.body.session_id },
    });
    expect(ask.status).toBe(200);
    expect(ask.body.reply).toContain(inc.id);
    expect(ask.body.reply).toContain('Room for this');

    const freeInc = (await open({ title: 'Free' }, freeWrite)).body;
    const refused = await call(url, 'POST', `/api/v1/incidents/${freeInc.id}/war-room`, { token: freeWrite });
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({
      error: 'tier_restricted',
      message: expect.any(String),
      upgrade_required: true,
    });
    expect((await timeline(freeInc.id, '', freeWrite)).body.events).toHaveLength(1);
  });

  it('agent-investigate: 202 {job_id, status, run_id, session_id}, spends budget, 429 when spent', async ({
    url,
    aWrite,
    open,
    timeline,
  }) => {
    const inc = (await open({ title: 'Investigate me', severity: 'SEV2' })).body;
    // One unit of a budget of 2 was spent by the war room's turn above.
    const res = await call(url, 'POST', `/api/v1/incidents/${inc.id}/agent-investigate`, { token: aWrite });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: res.body.run_id, status: 'queued', run_id: UUID, session_id: UUID });
    const spent = await call(url, 'POST', `/api/v1/incidents/${inc.id}/agent-investigate`, { token: aWrite });
    expect(spent.status).toBe(429);
    expect(spent.headers.get('retry-after')).toMatch(/^\d+$/);
    for (let i = 0; i < 300; i++) {
      const kinds = (await timeline(inc.id)).body.events.map((e: { kind: string }) => e.kind);
      if (kinds.includes('investigation_completed')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const events = (await timeline(inc.id)).body.events as Array<Record<string, any>>;
    expect(events.map((e) => e.kind)).toEqual([
      'created',
      'investigation_started',
      'investigation_completed',
    ]);
    const done = events[2]!;
    expect(done.actor).toBe('agent');
    expect(done.data).toMatchObject({ run_id: res.body.run_id, session_id: res.body.session_id });
    expect(done.body).toContain(inc.id);
    expect(done.data.cited).toContain(inc.id);
  });
});

describe('triage', () => {
  it('our JSON: a new critical alert opens an incident (source triage); a burst of it is one event with a count', async ({
    url,
    bWrite,
    post,
  }) => {
    const alert = { title: 'API 5xx', severity: 'critical', source: 'grafana', fingerprint: 'fp-burst' };
    const first = await post(alert, bWrite);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      accepted: 1,
      batch_id: UUID,
      pending: false,
      events: [{ id: expect.any(Number), action: 'incident_opened', incident_id: UUID }],
    });
    const burst = await post(
      Array.from({ length: 20 }, () => alert),
      bWrite,
    );
    expect(burst.body.accepted).toBe(20);
    expect(new Set(burst.body.events.map((e: any) => e.id))).toEqual(new Set([first.body.events[0].id]));
    expect(burst.body.events.every((e: any) => e.action === 'deduplicated')).toBe(true);
    const events = await call(url, 'GET', '/api/v1/triage/events', { token: bWrite });
    expect(events.status).toBe(200);
    expect(events.body.events).toEqual([
      {
        id: first.body.events[0].id,
        at: ISO,
        source: 'grafana',
        fingerprint: 'fp-burst',
        title: 'API 5xx',
        severity: 'critical',
        resource: null,
        action: 'incident_opened',
        incident_id: first.body.events[0].incident_id,
        count: 21,
        first_at: ISO,
        last_at: ISO,
        status: 'firing',
      },
    ]);
    const incident = await call(url, 'GET', `/api/v1/incidents/${first.body.events[0].incident_id}`, {
      token: bWrite,
    });
    expect(incident.body).toMatchObject({
      source: 'triage',
      severity: 'SEV1',
      title: 'API 5xx',
      alert_count: 21,
    });
    const overview = await call(url, 'GET', '/api/v1/triage/overview', { token: bWrite });
    expect(overview.body).toEqual({
      pipeline: { received: 21, deduplicated: 20, suppressed: 0, correlated: 0, incidents_opened: 1 },
      open_alerts: 1,
      rules: 5,
      last_event_at: ISO,
    });
  });

  it('Alertmanager v4 and SNS CloudWatch alarms are recognised; info is suppressed and counted', async ({
    url,
    bWrite,
    post,
    inbox,
  }) => {
    const am = await post(
      {
        version: '4',
        status: 'firing',
        receiver: 'opsi',
        groupKey: '{}:{alertname="DiskFull"}',
        alerts: [
          {
            status: 'firing',
            labels: { alertname: 'DiskFull', severity: 'warning', instance: 'db-1' },
            annotations: { summary: 'Disk almost full' },
            startsAt: '2026-11-01T10:00:00Z',
            endsAt: '0001-01-01T00:00:00Z',
            fingerprint: 'am-1',
          },
          { status: 'firing', labels: { alertname: 'Heartbeat', severity: 'info' }, fingerprint: 'am-2' },
        ],
      },
      bWrite,
    );
    expect(am.status).toBe(202);
    expect(am.body.events.map((e: any) => e.action)).toEqual(['new', 'suppressed']);
    const message = {
      AlarmName: 'prod-db-cpu-critical',
      NewStateValue: 'ALARM',
      NewStateReason: 'Threshold crossed',
      StateChangeTime: '2026-11-01T10:05:00.000+0000',
      AlarmArn: 'arn:aws:cloudwatch:us-east-1:111111111111:alarm:prod-db-cpu-critical',
      Trigger: {
        MetricName: 'CPUUtilization',
        Namespace: 'AWS/RDS',
        Dimensions: [{ name: 'DBInstanceIdentifier', value: 'db-x' }],
      },
    };
    // An SNS message must be signed (decisions.md "Wave 3"): unsigned, it is 403 and stores nothing.
    const before = await inbox();
    const unsigned = await post(
      {
        Type: 'Notification',
        MessageId: 'm-1',
        TopicArn: 'arn:aws:sns:us-east-1:111111111111:alarms',
        Message: JSON.stringify(message),
        Timestamp: '2026-11-01T10:05:01.000Z',
      },
      bWrite,
    );
    expect(unsigned.status, unsigned.text).toBe(403);
    expect(unsigned.body.detail).toMatch(/not signed/);
    expect(await inbox()).toBe(before);
    // The alarm itself (as a relay posts it, without SNS's envelope) is recognised; signed SNS
    // deliveries are tested against a local SNS in test/e2e/sns.e2e.test.ts.
    const sns = await post(message, bWrite);
    expect(sns.status).toBe(202);
    expect(sns.body.events).toEqual([
      { id: expect.any(Number), action: 'incident_opened', incident_id: UUID },
    ]);
    const listed = (await call(url, 'GET', '/api/v1/triage/events?limit=1', { token: bWrite })).body.events;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      source: 'cloudwatch',
      title: 'prod-db-cpu-critical',
      severity: 'critical',
    });
    expect(
      (await call(url, 'GET', '/api/v1/triage/overview', { token: bWrite })).body.pipeline.suppressed,
    ).toBe(1);
  });

  it('anything else is 400 and stores nothing', async ({ url, bWrite, post, inbox }) => {
    const before = await inbox();
    for (const body of [
      { hello: 'world' },
      { title: 'x', severity: 'loud', source: 's' },
      [],
      { version: '3', status: 'firing', receiver: 'r', alerts: [] },
      { Records: [{ EventSource: 'aws:sns', Sns: { Type: 'Notification', Message: 'x' } }] },
      { AlarmName: 'x', NewStateValue: 'LOUD' },
      Array.from({ length: 1001 }, () => ({ title: 'x', severity: 'low', source: 's' })),
    ]) {
      const res = await post(body, bWrite);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect(await inbox()).toBe(before);
    expect((await call(url, 'GET', '/api/v1/triage/events?limit=0', { token: bWrite })).status).toBe(400);
  });

  it('rules: the built-in ones and the tenant’s own; other tenants see only theirs', async ({
    url,
    b,
    aRead,
    bWrite,
    t,
    post,
  }) => {
    await t.db
      .insertInto('triage_rules')
      .values({
        tenant_id: b.tenant.id,
        name: 'Silence canaries',
        kind: 'suppress',
        match: JSON.stringify({ title_contains: 'canary' }),
        action: JSON.stringify({ suppress: true }),
      })
      .execute();
    const rules = await call(url, 'GET', '/api/v1/triage/rules', { token: bWrite });
    expect(rules.status).toBe(200);
    expect(rules.body.rules.map((r: any) => [r.kind, r.built_in])).toEqual([
      ['suppress', false],
      ['dedupe', true],
      ['suppress', true],
      ['suppress', true],
      ['correlate', true],
      ['route', true],
    ]);
    const canary = await post({ title: 'canary failed', severity: 'critical', source: 'ci' }, bWrite);
    expect(canary.body.events[0].action).toBe('suppressed');
    expect((await call(url, 'GET', '/api/v1/triage/rules', { token: aRead })).body.rules).toHaveLength(5);
  });
});

describe('the demo incident storyline, through the scan triage job', () => {
  it('comes out as one incident with its alerts attached, the duplicates counted once, the past one linked', async ({
    url,
    t,
  }) => {
    const c = await createTenantWithUser(t);
    await connectEnvironment(t.db, c.tenant.id, {
      kind: 'demo',
      seed: 42,
      size: 'small',
      epoch: '2026-11-01',
    });
    const scan = await requestScan(t.db, null, c.tenant.id, 'test');
    await runScan(t.db, scan.id);
    const deps = {
      db: t.db,
      timeline: new TimelineLog(t.redis, t.redisPrefix),
      dedupeWindowMinutes: 30,
      correlationWindowMinutes: 120,
    };
    const decided = await triageInventoryAlerts(deps, c.tenant.id);
    expect(decided.decided).toBe(9);
    // Idempotent: a second pass (a retried job, the next scan) decides nothing again.
    expect((await triageInventoryAlerts(deps, c.tenant.id)).decided).toBe(0);

    const incidents = await t.db
      .selectFrom('incidents')
      .selectAll()
      .where('tenant_id', '=', c.tenant.id)
      .orderBy('started_at')
      .execute();
    const [past, now] = incidents;
    expect(incidents).toHaveLength(2);
    expect(past).toMatchObject({ status: 'resolved', source: 'triage' });
    expect(now).toMatchObject({
      status: 'open',
      source: 'triage',
      severity: 'SEV1',
      recurrence_of: past!.id,
    });
    expect(incidents.filter((i) => i.status !== 'resolved')).toHaveLength(1);

    const token = (await mintTestToken(t, c, 'read')).token;
    const events = (await call(url, 'GET', '/api/v1/triage/events', { token })).body.events as any[];
    const byTitle = (title: string) => events.filter((e) => e.title === title && e.incident_id === now!.id);
    expect(byTitle('RDSCPUUtilizationHigh')).toMatchObject([{ count: 5, action: 'incident_opened' }]);
    expect(byTitle('RDSDatabaseConnectionsHigh')).toMatchObject([{ count: 1, action: 'correlated' }]);
    expect(byTitle('ALBHTTP5xxHigh')).toMatchObject([{ count: 2, action: 'correlated' }]);
    expect(events.filter((e) => e.incident_id === past!.id)).toMatchObject([
      { title: 'RDSCPUUtilizationHigh', count: 1, action: 'incident_opened', status: 'resolved' },
    ]);
    expect(byTitle('RDSCPUUtilizationHigh')[0].resource).toMatchObject({
      name: 'prod-payments-db',
      type: expect.any(String),
    });

    const detail = (await call(url, 'GET', `/api/v1/incidents/${now!.id}`, { token })).body;
    expect(detail.alert_count).toBe(8);
    expect(detail.resources.map((r: any) => r.name).sort()).toEqual(['checkout-alb', 'prod-payments-db']);
    const kinds = (
      await call(url, 'GET', `/api/v1/incidents/${now!.id}/timeline`, { token })
    ).body.events.map((e: any) => e.kind);
    expect(kinds).toEqual(['created', 'alert_attached', 'linked', 'alert_attached', 'alert_attached']);

    // The agent answers from the incident records, citing ids.
    const write = (await mintTestToken(t, c, 'read_write')).token;
    const ask = async (prompt: string) => {
      const res = await call(url, 'POST', '/api/v1/ask', { token: write, body: { prompt } });
      expect(res.status, prompt).toBe(200);
      expect(res.body.reply, prompt).not.toContain('Unverified');
      return res.body.reply as string;
    };
    const happening = await ask(`What is happening in incident ${now!.id}?`);
    expect(happening).toContain(now!.id);
    expect(happening).toContain('RDSCPUUtilizationHigh');
    expect(happening).toContain('5 times');
    expect(happening).toContain(past!.id);
    const latest = await ask('What was the latest SEV1?');
    expect(latest).toContain(`The latest SEV1 incident is RDSCPUUtilizationHigh on prod-payments-db`);
    expect(latest).toContain(now!.id);
    const openOnes = await ask('Which incidents are open?');
    expect(openOnes).toContain(now!.id);
    expect(openOnes).not.toContain(past!.id);
  });
});

describe('the live timeline hears of an event only after its commit', () => {
  it('inside the transaction the stream is silent; after the commit it holds the event; a rollback publishes nothing', async ({
    a,
    t,
    open,
    timeline,
  }) => {
    const created = (await open({ title: 'Publish after commit' })).body;
    const log = new TimelineLog(t.redis, t.redisPrefix);
    const before = (await log.read(created.id, 0)).length;
    let seenInside = -1;
    const event = await timelineTransaction(t.db, async (tx) => {
      const e = await appendTimelineEvent(tx, log, a.tenant.id, created.id, {
        kind: 'note',
        body: 'written',
        actor: 'test',
      });
      seenInside = (await log.read(created.id, 0)).length;
      return e;
    });
    expect(seenInside).toBe(before);
    const after = await log.read(created.id, 0);
    expect(after.map((e) => Number((e as { id?: number }).id))).toContain(event!.id);

    await expect(
      timelineTransaction(t.db, async (tx) => {
        await appendTimelineEvent(tx, log, a.tenant.id, created.id, {
          kind: 'note',
          body: 'rolled back',
          actor: 'test',
        });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await log.read(created.id, 0)).toHaveLength(after.length);
    const listed = (await timeline(created.id)).body.events.map((e: { body: string }) => e.body);
    expect(listed).toContain('written');
    expect(listed).not.toContain('rolled back');
  });

  it('appending outside timelineTransaction is refused, so no writer can publish before its commit', async ({
    a,
    t,
    open,
  }) => {
    const created = (await open({ title: 'Outside' })).body;
    await expect(
      t.db.transaction().execute((tx) =>
        appendTimelineEvent(tx, new TimelineLog(t.redis, t.redisPrefix), a.tenant.id, created.id, {
          kind: 'note',
          body: 'x',
          actor: 'test',
        }),
      ),
    ).rejects.toThrow(/timelineTransaction/);
  });
});
