import { describe, expect } from 'vitest';
import { call, createTenantWithUser, mintTestToken, realworldFiles } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// Alerts from the senders users run (issue 25, decisions.md "Wave 3"): HTTP Basic with the token as the
// password, and the real Alertmanager and Grafana payloads of ../shared/realworld/alertmanager, posted
// over HTTP as the sender posts them. SNS (signed, text/plain) is in test/e2e/sns.e2e.test.ts.

const basic = (token: string, user = 'opsi') => `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;

const it = apiTest
  // Only the triage pool: it turns alerts into events and incidents.
  .override({ workerConfig: { WORKER_QUEUES: ['triage'] } })
  /** `tenant()`: a new tenant with its owner and a read_write and a read token. */
  .extend('tenant', async ({ t }) => async () => {
    const m = await createTenantWithUser(t);
    return {
      m,
      rw: (await mintTestToken(t, m, 'read_write')).token,
      ro: (await mintTestToken(t, m, 'read')).token,
    };
  })
  /** Posts a body as the sender does: its own bytes, application/json, the token in Basic auth. */
  .extend(
    'send',
    async ({ url }) =>
      (token: string, text: string, headers: Record<string, string> = {}) =>
        call(url, 'POST', '/api/v1/triage/alerts', {
          headers: { authorization: basic(token), 'content-type': 'application/json', ...headers },
          rawBody: text,
        }),
  )
  .extend('events', async ({ url }) => async (token: string): Promise<any[]> => {
    const res = await call(url, 'GET', '/api/v1/triage/events?limit=500', { token });
    expect(res.status, res.text).toBe(200);
    return res.body.events;
  });

describe('HTTP Basic with the token as the password, wherever a bearer token is accepted', () => {
  it('any user name, the token as password: same answers as Bearer (200, 401, 403)', async ({
    url,
    t,
    tenant,
    send,
  }) => {
    const a = await tenant();
    const me = await call(url, 'GET', '/api/v1/me', { headers: { authorization: basic(a.ro, 'x') } });
    expect(me.status, me.text).toBe(200);
    expect(me.body.tenant.id).toBe(a.m.tenant.id);
    // Scope: a read token in Basic cannot write.
    const ro = await send(a.ro, JSON.stringify({ title: 't', severity: 'low', source: 's' }));
    expect(ro.status, ro.text).toBe(403);
    // Unknown token, empty password, no colon: 401 {detail}, never a fall-through.
    for (const authorization of [
      basic('opsi_' + 'x'.repeat(43)),
      basic(''),
      `Basic ${Buffer.from(a.rw).toString('base64')}`,
    ]) {
      const res = await call(url, 'GET', '/api/v1/me', { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.body.detail).toEqual(expect.any(String));
    }
    // Tenant: the Basic token of tenant A naming tenant B is 403.
    const b = await tenant();
    const cross = await call(url, 'GET', '/api/v1/me', {
      headers: { authorization: basic(a.rw), 'x-tenant-id': b.m.tenant.id },
    });
    expect(cross.status).toBe(403);
    // Revoked: 401.
    const { token, id } = await mintTestToken(t, a.m, 'read');
    expect((await call(url, 'GET', '/api/v1/me', { headers: { authorization: basic(token) } })).status).toBe(
      200,
    );
    await call(url, 'DELETE', `/api/v1/tokens/${id}`, { token: a.rw });
    expect((await call(url, 'GET', '/api/v1/me', { headers: { authorization: basic(token) } })).status).toBe(
      401,
    );
  });

  it('the alert route challenges for Basic too (Amazon SNS sends credentials only when challenged); others only for Bearer', async ({
    url,
    tenant,
    send,
  }) => {
    const a = await tenant();
    const body = JSON.stringify({ title: 't', severity: 'low', source: 's' });
    const bare = await call(url, 'POST', '/api/v1/triage/alerts', {
      headers: { 'content-type': 'application/json' },
      rawBody: body,
    });
    expect(bare.status, bare.text).toBe(401);
    expect(bare.body.detail).toEqual(expect.any(String));
    // Two WWW-Authenticate lines (fetch joins them): one challenge each, as a Java client reads them.
    expect(bare.headers.get('www-authenticate')).toBe('Bearer, Basic realm="opsi", charset="UTF-8"');
    const wrong = await send('opsi_' + 'x'.repeat(43), body);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/Basic realm="opsi"/);
    // Answering the challenge with the token as the Basic password is accepted.
    expect((await send(a.rw, body)).status).toBe(202);
    // A browser would answer a Basic challenge with its own login dialog: the console's routes never send one.
    const me = await call(url, 'GET', '/api/v1/me', {});
    expect(me.status).toBe(401);
    expect(me.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('text/plain is read only as an SNS message (x-amz-sns-message-type); other routes keep their 415', async ({
    url,
    tenant,
    send,
    events,
  }) => {
    const a = await tenant();
    const plain = await send(a.rw, JSON.stringify({ title: 't', severity: 'low', source: 's' }), {
      'content-type': 'text/plain; charset=UTF-8',
    });
    expect(plain.status, plain.text).toBe(415);
    const other = await call(url, 'POST', '/api/v1/incidents', {
      token: a.rw,
      headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
      rawBody: JSON.stringify({ title: 'x' }),
    });
    expect(other.status, other.text).toBe(415);
    // An SNS-typed text/plain body that is not signed: 403, nothing stored.
    const unsigned = await send(
      a.rw,
      JSON.stringify({ Type: 'Notification', MessageId: '1', TopicArn: 'arn', Message: 'hi' }),
      { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
    );
    expect(unsigned.status, unsigned.text).toBe(403);
    expect(await events(a.ro)).toEqual([]);
  });
});

const SEVERITY: Record<string, string> = { critical: 'critical', warning: 'medium', info: 'info' };
const real = realworldFiles('alertmanager');
const snsCorpus = realworldFiles('sns');

describe.skipIf(!!real.missing)(
  `the real Alertmanager and Grafana payloads of ../shared/realworld/alertmanager ${real.missing ?? ''}`,
  () => {
    for (const { name, text } of real.files) {
      it(`${name}: accepted, one event per alert with its title, severity and status`, async ({
        tenant,
        send,
        events,
      }) => {
        const a = await tenant();
        const payload = JSON.parse(text);
        const res = await send(a.rw, text);
        expect(res.status, res.text).toBe(202);
        expect(res.body.accepted).toBe(payload.alerts.length);
        expect(res.body.events).toHaveLength(payload.alerts.length);
        const listed = new Map((await events(a.ro)).map((e) => [e.id, e]));
        const grafana = String(payload.version) === '1' && 'orgId' in payload;
        // Alerts sharing a fingerprint in one payload are one event: its last alert's status stands.
        const lastStatus = new Map<number, string>();
        payload.alerts.forEach((alert: any, i: number) => {
          const event = listed.get(res.body.events[i].id);
          expect(event, `alert ${i}`).toBeDefined();
          expect(event.source).toBe(grafana ? 'grafana' : 'alertmanager');
          const first = payload.alerts.findIndex(
            (x: any, j: number) => j <= i && res.body.events[j].id === res.body.events[i].id,
          );
          const owner = payload.alerts[first];
          expect(event.title).toBe(owner.annotations?.summary || owner.labels.alertname);
          expect(event.severity).toBe(SEVERITY[owner.labels.severity] ?? 'medium');
          lastStatus.set(event.id, alert.status ?? payload.status);
        });
        for (const [id, status] of lastStatus) expect(listed.get(id).status, `event ${id}`).toBe(status);
      });
    }

    it.skipIf(!!snsCorpus.missing)(
      'Grafana resolved and CloudWatch OK, like Alertmanager resolved: the event resolved, one note on its incident',
      async ({ url, tenant, send, events }) => {
        const a = await tenant();
        // Grafana's contact point payload, its rule given a severity as users give it, firing now.
        const grafana = JSON.parse(real.files.find((f) => f.name === 'bougou-grafana-alert.json')!.text);
        grafana.alerts[0].labels.severity = 'critical';
        grafana.alerts[0].startsAt = new Date().toISOString();
        // A CloudWatch alarm as a relay posts it (../shared/realworld/sns), ALARM now, then OK.
        const alarm = JSON.parse(
          snsCorpus.files.find((f) => f.name === 'notifyslack-cloudwatch_alarm_bare_message.json')!.text,
        );
        alarm.StateChangeTime = new Date().toISOString();
        const opened: any[] = [];
        for (const fired of [grafana, alarm]) {
          const res = await send(a.rw, JSON.stringify(fired));
          expect(res.status, res.text).toBe(202);
          expect(res.body.events[0].action).toBe('incident_opened');
          opened.push(res.body.events[0]);
        }
        const grafanaResolved = structuredClone(grafana);
        grafanaResolved.status = 'resolved';
        grafanaResolved.state = 'ok';
        grafanaResolved.alerts[0].status = 'resolved';
        grafanaResolved.alerts[0].endsAt = new Date().toISOString();
        const ok = {
          ...alarm,
          OldStateValue: 'ALARM',
          NewStateValue: 'OK',
          StateChangeTime: new Date().toISOString(),
        };
        for (const [n, resolved] of [grafanaResolved, ok].entries()) {
          const res = await send(a.rw, JSON.stringify(resolved));
          expect(res.status, res.text).toBe(202);
          expect(res.body.events[0]).toMatchObject({ id: opened[n].id, incident_id: opened[n].incident_id });
        }
        const listed = await events(a.ro);
        for (const [n, title] of ['CPU Usage High', 'Example'].entries()) {
          expect(listed.find((e) => e.id === opened[n].id)).toMatchObject({ title, status: 'resolved' });
          const timeline = await call(url, 'GET', `/api/v1/incidents/${opened[n].incident_id}/timeline`, {
            token: a.ro,
          });
          const notes = timeline.body.events.filter((e: any) => e.kind === 'alert_resolved');
          expect(notes, title).toHaveLength(1);
          expect(notes[0].body).toContain(`${title} resolved`);
        }
      },
    );

    it('zulip firing then resolved: the resolution marks the event resolved and notes it on the incident', async ({
      url,
      tenant,
      send,
      events,
    }) => {
      const a = await tenant();
      const file = (n: string) => real.files.find((f) => f.name === n)!.text;
      const fired = await send(a.rw, file('zulip-alert-firing.json'));
      expect(fired.status, fired.text).toBe(202);
      const opened = fired.body.events[0];
      expect(opened.action).toBe('incident_opened');
      const resolved = await send(a.rw, file('zulip-single_alert-resolved.json'));
      expect(resolved.status, resolved.text).toBe(202);
      expect(resolved.body.events[0]).toMatchObject({ id: opened.id, incident_id: opened.incident_id });
      const event = (await events(a.ro)).find((e) => e.id === opened.id);
      expect(event.status).toBe('resolved');
      const timeline = await call(url, 'GET', `/api/v1/incidents/${opened.incident_id}/timeline`, {
        token: a.ro,
      });
      const notes = timeline.body.events.filter((e: any) => e.kind === 'alert_resolved');
      expect(notes).toHaveLength(1);
      expect(notes[0].body).toMatch(/High CPU core temperature resolved/);
      // A second resolved is a repeat: no second note.
      await send(a.rw, file('zulip-single_alert-resolved.json'));
      const again = await call(url, 'GET', `/api/v1/incidents/${opened.incident_id}/timeline`, {
        token: a.ro,
      });
      expect(again.body.events.filter((e: any) => e.kind === 'alert_resolved')).toHaveLength(1);
    });
  },
);
