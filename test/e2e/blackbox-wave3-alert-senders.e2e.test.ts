import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { call, createTenantWithUser, mintTestToken, until } from '../support/index';
import { hasRealworld, readRealworld, realworldFiles, REALWORLD_SKIP } from '../support/blackbox-realworld';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of decisions.md "Wave 3", "Grafana and older Alertmanager payloads" (issue 25):
// Grafana's webhook contact point (version "1", with state, title, message, orgId) and Alertmanager
// payloads whose version is not "4", whose fingerprint is empty or missing (computed as for our JSON),
// or whose groupKey is a number are accepted when they carry `alerts: [{status, labels}]`; a resolved
// alert marks its triage event resolved and writes a timeline note on the incident it joined. The
// payloads are the senders' own, read from ../shared/realworld/alertmanager. Real API and worker
// processes, HTTP only.

const HAS_CORPUS = hasRealworld('alertmanager');

let svc: SplitServices;
let base = '';

const tag = () => randomBytes(4).toString('hex');

function payload(file: string): any {
  return JSON.parse(readRealworld('alertmanager', file).toString('utf8'));
}

/** A tenant of its own and its read_write token. */
async function freshTenant(): Promise<string> {
  const m = await createTenantWithUser(svc.t, { tier: 'team' });
  return (await mintTestToken(svc.t, m, 'read_write')).token;
}

const post = (token: string, body: unknown) => call(base, 'POST', '/api/v1/triage/alerts', { token, body });

async function events(token: string): Promise<any[]> {
  const res = await call(base, 'GET', '/api/v1/triage/events?limit=500', { token });
  expect(res.status, res.text).toBe(200);
  return res.body.events;
}

/** Whether every alert carries what the decision asks for: `alerts: [{status, labels}]`. */
function carriesStatusAndLabels(p: any): boolean {
  return (
    Array.isArray(p?.alerts) &&
    p.alerts.length > 0 &&
    p.alerts.every((a: any) => typeof a?.status === 'string' && a.labels && typeof a.labels === 'object')
  );
}

beforeAll(async () => {
  if (!HAS_CORPUS) return;
  // The answer waits for the triage decision (so that `events` are in it) up to this bound.
  svc = await startSplitServices({ env: { TRIAGE_WAIT_MS: '30000' } });
  base = svc.base;
}, 300_000);

afterAll(async () => {
  await svc?.stop();
});

describe.skipIf(!HAS_CORPUS)('every Alertmanager/Grafana payload of ../shared/realworld/alertmanager', () => {
  const files = HAS_CORPUS ? realworldFiles('alertmanager') : [];

  it.each(files)(
    '%s: accepted (202, one event per alert) when its alerts carry status and labels; otherwise a 202 or a 400 {detail}, never a 5xx',
    async (file) => {
      const token = await freshTenant();
      const p = payload(file);
      const res = await post(token, p);
      if (carriesStatusAndLabels(p)) {
        expect(res.status, `${file}: ${res.text}`).toBe(202);
        expect(res.body.accepted, res.text).toBe(p.alerts.length);
        expect(res.body.pending, res.text).toBe(false);
        expect(res.body.events, res.text).toHaveLength(p.alerts.length);
        const listed = await events(token);
        expect(listed.length, JSON.stringify(listed)).toBeGreaterThan(0);
      } else {
        expect([202, 400], `${file}: ${res.text}`).toContain(res.status);
        if (res.status === 400) {
          expect(typeof res.body?.detail, res.text).toBe('string');
          expect(await events(token)).toEqual([]);
        }
      }
    },
  );
});

describe.skipIf(!HAS_CORPUS)('shapes the decision names, one by one', () => {
  it('Grafana (version "1", orgId, state, title, message): firing is accepted, and its resolved notification marks the event resolved', async () => {
    const token = await freshTenant();
    const t = tag();
    const firing = payload('bougou-grafana-alert.json');
    firing.alerts[0].labels.alertname = `CPU Usage High ${t}`;
    firing.alerts[0].fingerprint = randomBytes(8).toString('hex');
    firing.commonLabels.alertname = `CPU Usage High ${t}`;
    firing.title = `[FIRING:1] CPU Usage High ${t} alert (testvalue)`;
    expect(firing.version).toBe('1');
    const r1 = await post(token, firing);
    expect(r1.status, r1.text).toBe(202);
    expect(r1.body.events, r1.text).toHaveLength(1);
    const eventId = r1.body.events[0].id;

    const resolved = structuredClone(firing);
    resolved.status = 'resolved';
    resolved.state = 'ok';
    resolved.title = `[RESOLVED] CPU Usage High ${t} alert (testvalue)`;
    resolved.message = resolved.message.replace('**Firing**', '**Resolved**');
    resolved.alerts[0].status = 'resolved';
    resolved.alerts[0].endsAt = new Date().toISOString();
    const r2 = await post(token, resolved);
    expect(r2.status, r2.text).toBe(202);
    const ev = await until(
      'the Grafana alert resolved',
      async () => (await events(token)).find((e) => e.id === eventId && e.status === 'resolved'),
      30_000,
      250,
    );
    expect(ev.status).toBe('resolved');
  });

  it('Alertmanager version "3" with a numeric groupKey and no fingerprint: a critical alert opens an incident; its resolved notification resolves the event and writes a timeline note on that incident', async () => {
    const token = await freshTenant();
    const t = tag();
    const firing = payload('alerta-prometheus_v3_numeric_groupKey.json');
    expect(typeof firing.groupKey).toBe('number');
    expect(firing.version).toBe('3');
    firing.alerts[0].labels.instance = `host-${t}`;
    const r1 = await post(token, firing);
    expect(r1.status, r1.text).toBe(202);
    expect(r1.body.events, r1.text).toHaveLength(1);
    const [first] = r1.body.events;
    expect(first.action, r1.text).toBe('incident_opened');
    expect(typeof first.incident_id).toBe('string');
    const timeline = async () => {
      const res = await call(base, 'GET', `/api/v1/incidents/${first.incident_id}/timeline`, { token });
      expect(res.status, res.text).toBe(200);
      return (res.body.events ?? res.body.timeline ?? res.body) as any[];
    };
    const before = await timeline();

    const resolved = structuredClone(firing);
    resolved.status = 'resolved';
    resolved.alerts[0].status = 'resolved';
    resolved.alerts[0].endsAt = '2016-08-01T13:37:08.008+03:00';
    const r2 = await post(token, resolved);
    expect(r2.status, r2.text).toBe(202);
    await until(
      'the v3 alert resolved',
      async () => (await events(token)).find((e) => e.id === first.id && e.status === 'resolved'),
      30_000,
      250,
    );
    const note = await until(
      'a timeline note of the resolution',
      async () => {
        const now = await timeline();
        const fresh = now.filter((e) => !before.some((b) => b.id === e.id));
        return fresh.find((e) => /resolv/i.test(JSON.stringify(e)));
      },
      30_000,
      250,
    );
    expect(note).toBeTruthy();
  });

  it('Alertmanager version "3" without fingerprints: the computed fingerprint is stable (the same payload again is deduplicated)', async () => {
    const token = await freshTenant();
    const p = payload('dingtalk-PlaygroundDemoAlert.json');
    expect(p.alerts.every((a: any) => !a.fingerprint)).toBe(true);
    const r1 = await post(token, p);
    expect(r1.status, r1.text).toBe(202);
    expect(r1.body.events, r1.text).toHaveLength(p.alerts.length);
    const r2 = await post(token, p);
    expect(r2.status, r2.text).toBe(202);
    expect(r2.body.events, r2.text).toHaveLength(p.alerts.length);
    for (const e of r2.body.events) expect(e.action, r2.text).toBe('deduplicated');
    expect(r2.body.events.map((e: any) => e.id).sort()).toEqual(r1.body.events.map((e: any) => e.id).sort());
  });

  it('an empty fingerprint is computed from the alert, not taken as "": two alerts with different labels are two events', async () => {
    const token = await freshTenant();
    const p = payload('imgix-alert_payload.json');
    expect(p.version).toBeUndefined();
    expect(p.alerts.map((a: any) => a.fingerprint)).toEqual(['', '']);
    const res = await post(token, p);
    expect(res.status, res.text).toBe(202);
    expect(res.body.events, res.text).toHaveLength(2);
    const [e1, e2] = res.body.events;
    expect(e1.id).not.toBe(e2.id);
    expect(e2.action, res.text).not.toBe('deduplicated');
    expect((await events(token)).length).toBe(2);
  });

  it('a version "4" Alertmanager payload (the shape that works today) keeps working', async () => {
    const token = await freshTenant();
    const p = payload('zulip-alert-firing.json');
    const res = await post(token, p);
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted).toBe(p.alerts.length);
  });

  it('a payload that is none of the shapes is still 400 {detail} and stores nothing', async () => {
    const token = await freshTenant();
    const res = await post(token, { version: '1', orgId: 1, state: 'alerting', title: 'no alerts array' });
    expect(res.status, res.text).toBe(400);
    expect(typeof res.body?.detail).toBe('string');
    expect(await events(token)).toEqual([]);
  });
});

if (!HAS_CORPUS) {
  describe('Grafana and older Alertmanager payloads', () => {
    it.skip(REALWORLD_SKIP, () => undefined);
  });
}
