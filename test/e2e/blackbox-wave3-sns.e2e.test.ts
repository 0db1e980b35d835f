import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { call, createTenantWithUser, mintTestToken, until, type TestMember } from '../support/index';
import { hasRealworld, readRealworld, REALWORLD_SKIP } from '../support/blackbox-realworld';
import {
  makeCertificates,
  snsBody,
  snsHeaders,
  startSnsPeer,
  type CertificateSet,
  type SnsMessage,
  type SnsPeer,
} from '../support/blackbox-sns-peer';
import { startSplitServices, type SplitServices } from '../support/split';

// Black-box checks of decisions.md "Wave 3", "Amazon SNS, as AWS delivers it" (issue 25), from the
// contract alone: POST /api/v1/triage/alerts takes SNS messages as SNS posts them (text/plain, the
// x-amz-sns-* headers, the token as the Basic password of the subscription URL), verifies every
// message's signature (SignatureVersion 1 and 2) with a certificate fetched only over HTTPS from
// SNS_TRUSTED_HOSTS, confirms subscriptions by GET of SubscribeURL, and turns CloudWatch alarms,
// EventBridge events and plain text into alerts. A local HTTPS peer (test/support/sns-peer.ts) plays
// SNS: it signs with its own key over AWS's canonical string and serves its certificate; its CA is
// given to the service as NODE_EXTRA_CA_CERTS, and SNS_TRUSTED_HOSTS=127.0.0.1 trusts it. A second
// peer on `localhost` (a valid certificate, but not a trusted host) must never be asked anything.
// Messages are built from the corpus shapes in ../shared/realworld/sns, re-signed by the peer.

const HAS_CORPUS = hasRealworld('sns');

let certs: CertificateSet;
let peer: SnsPeer; // trusted: 127.0.0.1
let rogue: SnsPeer; // untrusted host: localhost
let svc: SplitServices;
let base = '';
let s: TestMember; // the subscribed tenant
let r: TestMember; // the tenant that only ever receives refused messages
let sTok = '';
let rTok = '';
let verifiedMessages = 0;

const tag = () => randomBytes(4).toString('hex');
const basic = (token: string) => `Basic ${Buffer.from(`opsi:${token}`).toString('base64')}`;

function corpus(file: string): SnsMessage {
  return JSON.parse(readRealworld('sns', file).toString('utf8')) as SnsMessage;
}

/** A corpus message with its AWS-only fields replaced, for the peer to sign. */
function fromCorpus(file: string, overrides: SnsMessage): SnsMessage {
  const m = corpus(file);
  for (const k of ['Signature', 'SignatureVersion', 'SigningCertURL', 'SubscribeURL', 'UnsubscribeURL'])
    delete m[k];
  return { ...m, MessageId: randomUUID(), Timestamp: new Date().toISOString(), ...overrides };
}

/** Posts a message exactly as SNS does (text/plain, x-amz-sns-* headers), with the token as Basic password. */
async function deliver(message: SnsMessage, token: string, extraHeaders: Record<string, string> = {}) {
  const body = snsBody(message);
  const res = await fetch(`${base}/api/v1/triage/alerts`, {
    method: 'POST',
    headers: { ...snsHeaders(message, body), authorization: basic(token), ...extraHeaders },
    body,
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}

async function events(token: string): Promise<any[]> {
  const res = await call(base, 'GET', '/api/v1/triage/events?limit=500', { token });
  expect(res.status, res.text).toBe(200);
  return res.body.events;
}

/** Waits for events (triage groups) that were not in `before`; answers them. */
async function newEvents(token: string, before: any[], n = 1): Promise<any[]> {
  const seen = new Set(before.map((e) => e.id));
  return until(
    `${n} new triage event(s)`,
    async () => {
      const fresh = (await events(token)).filter((e) => !seen.has(e.id));
      return fresh.length >= n ? fresh : undefined;
    },
    60_000,
    250,
  );
}

async function tenantTools(token: string): Promise<any[]> {
  const res = await call(base, 'GET', '/api/v1/marketplace/tenant/tools', { token });
  expect(res.status, res.text).toBe(200);
  return res.body.tools;
}

async function incidentsCount(token: string): Promise<number> {
  const res = await call(base, 'GET', '/api/v1/incidents?limit=500', { token });
  expect(res.status, res.text).toBe(200);
  return res.body.incidents.length;
}

function peerAsked(p: SnsPeer, pred: (u: URL) => boolean) {
  return p.requests.filter((q) => pred(new URL(q.url, p.origin)));
}

function subscriptionConfirmation(topicArn: string, token: string, subscribeUrl: string): SnsMessage {
  return fromCorpus('awsdocs-http-subscription-confirmation.json', {
    TopicArn: topicArn,
    Token: token,
    Message: `You have chosen to subscribe to the topic ${topicArn}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
    SubscribeURL: subscribeUrl,
  });
}

function cloudwatchAlarm(alarmName: string, topicArn: string, state = 'ALARM'): SnsMessage {
  const m = corpus('alerta-cloudwatch_notification_ALARM.json');
  const alarm = JSON.parse(m.Message);
  alarm.AlarmName = alarmName;
  alarm.NewStateValue = state;
  return fromCorpus('alerta-cloudwatch_notification_ALARM.json', {
    TopicArn: topicArn,
    Subject: `${state}: "${alarmName}" in EU (Ireland)`,
    Message: JSON.stringify(alarm),
  });
}

const TOPIC = () => `arn:aws:sns:us-west-2:123456789012:opsi-bb-${tag()}`;

beforeAll(async () => {
  if (!HAS_CORPUS) return;
  certs = makeCertificates();
  peer = await startSnsPeer(certs, '127.0.0.1');
  rogue = await startSnsPeer(certs, 'localhost');
  svc = await startSplitServices({
    env: { SNS_TRUSTED_HOSTS: '127.0.0.1', NODE_EXTRA_CA_CERTS: certs.caFile },
  });
  base = svc.base;
  s = await createTenantWithUser(svc.t, { tier: 'team' });
  r = await createTenantWithUser(svc.t, { tier: 'team' });
  sTok = (await mintTestToken(svc.t, s, 'read_write')).token;
  rTok = (await mintTestToken(svc.t, r, 'read_write')).token;
  for (const tok of [sTok, rTok]) {
    const inst = await call(base, 'POST', '/api/v1/marketplace/tenant/tools', {
      token: tok,
      body: { tool_id: 'cloudwatch_sns' },
    });
    expect([200, 201], inst.text).toContain(inst.status);
  }
}, 300_000);

afterAll(async () => {
  await svc?.stop();
  await peer?.close();
  await rogue?.close();
  certs?.remove();
});

describe.skipIf(!HAS_CORPUS)('SNS as AWS delivers it (decisions.md Wave 3)', () => {
  it('SubscriptionConfirmation (SignatureVersion 1): 200; the service GETs SubscribeURL on the peer; the subscription shows in GET /api/v1/marketplace/tenant/tools and in the audit log', async () => {
    const topic = TOPIC();
    const token = randomBytes(64).toString('hex');
    const msg = peer.sign(subscriptionConfirmation(topic, token, peer.subscribeUrl(topic, token)), '1');
    const res = await deliver(msg, sTok);
    verifiedMessages++;
    expect(res.status, res.text).toBe(200);
    await until(
      'the GET of SubscribeURL',
      () =>
        peerAsked(
          peer,
          (u) =>
            u.searchParams.get('Action') === 'ConfirmSubscription' &&
            u.searchParams.get('Token') === token &&
            u.searchParams.get('TopicArn') === topic,
        ).length > 0 || undefined,
      30_000,
      200,
    );
    const confirm = peerAsked(peer, (u) => u.searchParams.get('Token') === token);
    expect(confirm.every((q) => q.method === 'GET')).toBe(true);
    const entry = await until(
      'the subscription on the cloudwatch_sns integration',
      async () =>
        (await tenantTools(sTok)).find((t) => t.id === 'cloudwatch_sns' && JSON.stringify(t).includes(topic)),
      30_000,
      250,
    );
    expect(JSON.stringify(entry)).toMatch(/confirm/i);
    const audit = await call(base, 'GET', '/api/v1/audit?limit=500', { token: sTok });
    expect(audit.status, audit.text).toBe(200);
    expect(JSON.stringify(audit.body.entries)).toContain(topic);
    // Never another tenant's.
    expect(JSON.stringify(await tenantTools(rTok))).not.toContain(topic);
  });

  it('SubscriptionConfirmation (SignatureVersion 2, SHA256withRSA; the spring-cloud-aws shape): confirmed too', async () => {
    const topic = TOPIC();
    const token = randomBytes(64).toString('hex');
    const m = fromCorpus('springcloudaws-subscriptionConfirmation.json', {
      TopicArn: topic,
      Token: token,
      Message: `You have chosen to subscribe to the topic ${topic}.To confirm the subscription, visit the SubscribeURL included in this message.`,
      SubscribeURL: peer.subscribeUrl(topic, token),
    });
    const res = await deliver(peer.sign(m, '2'), sTok);
    verifiedMessages++;
    expect(res.status, res.text).toBe(200);
    await until(
      'the GET of SubscribeURL (v2)',
      () => peerAsked(peer, (u) => u.searchParams.get('Token') === token).length > 0 || undefined,
      30_000,
      200,
    );
    await until(
      'the v2 subscription listed',
      async () => (await tenantTools(sTok)).find((t) => JSON.stringify(t).includes(topic)),
      30_000,
      250,
    );
  });

  it('UnsubscribeConfirmation: 200, recorded, and its SubscribeURL is not visited (that would subscribe again)', async () => {
    const topic = TOPIC();
    const token = randomBytes(64).toString('hex');
    const m = fromCorpus('awsdocs-http-unsubscribe-confirmation.json', {
      TopicArn: topic,
      Token: token,
      Message: `You have chosen to deactivate subscription ${topic}:${randomUUID()}.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message.`,
      SubscribeURL: peer.subscribeUrl(topic, token),
    });
    const res = await deliver(peer.sign(m, '1'), sTok);
    verifiedMessages++;
    expect(res.status, res.text).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(peerAsked(peer, (u) => u.searchParams.get('Token') === token)).toHaveLength(0);
  });

  it('a Notification carrying a CloudWatch alarm (v1 and v2) becomes an alert: 202', async () => {
    for (const version of ['1', '2'] as const) {
      const before = await events(sTok);
      const name = `bb-alarm-${version}-${tag()}`;
      const res = await deliver(peer.sign(cloudwatchAlarm(name, TOPIC()), version), sTok);
      verifiedMessages++;
      expect(res.status, `v${version}: ${res.text}`).toBe(202);
      expect(res.body.accepted, res.text).toBe(1);
      const [ev] = await newEvents(sTok, before);
      expect(ev.title, JSON.stringify(ev)).toContain(name);
      expect(['critical', 'high']).toContain(ev.severity);
    }
  });

  it('a Notification carrying an EventBridge event (detail-type, source, resources) becomes an alert: 202', async () => {
    const before = await events(sTok);
    const instance = `i-0bb${tag()}${tag()}`;
    const event = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'EC2 Instance State-change Notification',
      source: 'aws.ec2',
      account: '123456789012',
      time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      region: 'us-east-1',
      resources: [`arn:aws:ec2:us-east-1:123456789012:instance/${instance}`],
      detail: { 'instance-id': instance, state: 'stopped' },
    };
    const m = fromCorpus('awsdocs-http-notification.json', {
      TopicArn: TOPIC(),
      Message: JSON.stringify(event),
    });
    delete m.Subject; // EventBridge → SNS notifications carry no subject
    const res = await deliver(peer.sign(m, '1'), sTok);
    verifiedMessages++;
    expect(res.status, res.text).toBe(202);
    expect(res.body.accepted, res.text).toBe(1);
    const [ev] = await newEvents(sTok, before);
    expect(typeof ev.title).toBe('string');
    expect(ev.title.trim().length).toBeGreaterThan(0);
    // Read as an EventBridge event, not as text whose first line is the JSON.
    expect(ev.title.trim().startsWith('{'), ev.title).toBe(false);
  });

  it('a Notification of plain text becomes an alert titled by its Subject, or else by its first line: 202', async () => {
    const t1 = tag();
    const before = await events(sTok);
    const withSubject = fromCorpus('springcloudaws-notificationMessage.json', {
      TopicArn: TOPIC(),
      Subject: `Nightly backup failed ${t1}`,
      Message: `The nightly backup of db-${t1} failed at 02:00.\nSee the job log.`,
    });
    const res1 = await deliver(peer.sign(withSubject, '1'), sTok);
    verifiedMessages++;
    expect(res1.status, res1.text).toBe(202);
    const [ev1] = await newEvents(sTok, before);
    expect(ev1.title).toBe(`Nightly backup failed ${t1}`);

    const t2 = tag();
    const before2 = await events(sTok);
    const noSubject = fromCorpus('awsdocs-http-notification.json', {
      TopicArn: TOPIC(),
      Message: `Disk almost full on host-${t2}\nfree: 2%\n`,
    });
    delete noSubject.Subject;
    const res2 = await deliver(peer.sign(noSubject, '2'), sTok);
    verifiedMessages++;
    expect(res2.status, res2.text).toBe(202);
    const [ev2] = await newEvents(sTok, before2);
    expect(ev2.title).toBe(`Disk almost full on host-${t2}`);
  });

  it('other routes keep their 415 for a text/plain body', async () => {
    const res = await fetch(`${base}/api/v1/incidents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sTok}`, 'content-type': 'text/plain; charset=UTF-8' },
      body: JSON.stringify({ title: 'text/plain elsewhere' }),
    });
    expect(res.status, await res.text()).toBe(415);
  });
});

describe.skipIf(!HAS_CORPUS)(
  'SNS messages that fail verification: 403 {detail}, nothing stored, nothing fetched',
  () => {
    const refusals: Array<[string, () => SnsMessage]> = [];
    let rogueBefore = 0;

    beforeAll(() => {
      if (!HAS_CORPUS) return;
      rogueBefore = rogue.requests.length;
      const alarm = () => cloudwatchAlarm(`bb-refused-${tag()}`, TOPIC());
      refusals.push(
        [
          'a tampered Message (v1)',
          () => {
            const m = peer.sign(alarm(), '1');
            return { ...m, Message: m.Message.replace('"ALARM"', '"OK"') || `${m.Message} ` };
          },
        ],
        ['a tampered Subject (v2)', () => ({ ...peer.sign(alarm(), '2'), Subject: 'changed after signing' })],
        ['a v1 signature presented as v2', () => ({ ...peer.sign(alarm(), '1'), SignatureVersion: '2' })],
        [
          'a missing Signature',
          () => {
            const m = peer.sign(alarm(), '1');
            delete m.Signature;
            return m;
          },
        ],
        [
          'a signature that is not one',
          () => ({
            ...peer.sign(alarm(), '1'),
            Signature: Buffer.from('not a signature').toString('base64'),
          }),
        ],
        [
          'a SigningCertURL on a host outside SNS_TRUSTED_HOSTS (validly signed, valid TLS)',
          () => peer.sign({ ...alarm(), SigningCertURL: rogue.certUrl }, '1'),
        ],
        [
          'a SigningCertURL over plain HTTP on the trusted host',
          () => peer.sign({ ...alarm(), SigningCertURL: peer.certUrl.replace('https://', 'http://') }, '1'),
        ],
        [
          'a corpus notification as AWS signed it (its certificate host sns.eu-west-1.amazonaws.com is not trusted here)',
          () => corpus('alerta-cloudwatch_notification_ALARM.json'),
        ],
        [
          "a corpus notification with AWS documentation's EXAMPLE signature",
          () => corpus('awsdocs-http-notification.json'),
        ],
      );
    });

    it('each is 403 {detail}; no alert, event or incident appears; the untrusted host is never asked', async () => {
      const beforeEvents = await events(rTok);
      const beforeIncidents = await incidentsCount(rTok);
      for (const [what, make] of refusals) {
        const res = await deliver(make(), rTok);
        expect(res.status, `${what}: ${res.text}`).toBe(403);
        expect(typeof res.body?.detail, `${what}: ${res.text}`).toBe('string');
      }
      // Nothing stored, then or later (the triage job, if any had been queued, would have run by now).
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await events(rTok)).toEqual(beforeEvents);
      expect(await incidentsCount(rTok)).toBe(beforeIncidents);
      const overview = await call(base, 'GET', '/api/v1/triage/overview', { token: rTok });
      expect(overview.status, overview.text).toBe(200);
      expect(overview.body.pipeline.received).toBe(0);
      expect(rogue.requests.slice(rogueBefore)).toEqual([]);
    });

    it('a SubscriptionConfirmation whose SubscribeURL is outside SNS_TRUSTED_HOSTS is refused (4xx {detail}): the URL is never fetched and no subscription is recorded', async () => {
      const topic = TOPIC();
      const token = randomBytes(64).toString('hex');
      const before = rogue.requests.length;
      const msg = peer.sign(subscriptionConfirmation(topic, token, rogue.subscribeUrl(topic, token)), '1');
      const res = await deliver(msg, rTok);
      // The credential is good and the signature too: refused for the SubscribeURL's host (the same host
      // rule as the certificate's: 403), not for want of a credential.
      expect([400, 403], res.text).toContain(res.status);
      expect(typeof res.body?.detail, res.text).toBe('string');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(rogue.requests.slice(before)).toEqual([]);
      expect(JSON.stringify(await tenantTools(rTok))).not.toContain(topic);
    });

    it('a forged SubscriptionConfirmation (bad signature) is 403 and its SubscribeURL is never fetched, even on the trusted host', async () => {
      const topic = TOPIC();
      const token = randomBytes(64).toString('hex');
      const signed = peer.sign(subscriptionConfirmation(topic, token, peer.subscribeUrl(topic, token)), '2');
      const forged = { ...signed, TopicArn: `${topic}-forged` };
      const res = await deliver(forged, rTok);
      expect(res.status, res.text).toBe(403);
      expect(typeof res.body?.detail).toBe('string');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(peerAsked(peer, (u) => u.searchParams.get('Token') === token)).toHaveLength(0);
      expect(JSON.stringify(await tenantTools(rTok))).not.toContain(topic);
    });

    it('the signing certificate is cached: fetched far fewer times than messages were verified with it', () => {
      const certPath = new URL(peer.certUrl).pathname;
      const fetches = peer.requests.filter((q) => q.method === 'GET' && q.url === certPath).length;
      expect(fetches).toBeGreaterThanOrEqual(1);
      expect(verifiedMessages).toBeGreaterThanOrEqual(6);
      // One fetch per process that verifies (the API, and the worker if it verifies too).
      expect(fetches, `${fetches} fetches for ${verifiedMessages} verified messages`).toBeLessThanOrEqual(2);
    });
  },
);

if (!HAS_CORPUS) {
  describe('SNS as AWS delivers it', () => {
    it.skip(REALWORLD_SKIP, () => undefined);
  });
}
