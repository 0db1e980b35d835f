import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenantWithUser,
  docSnippet,
  mintTestToken,
  realworldFiles,
  type TestMember,
} from '../support/index';
import { startSplitServices, type SplitServices } from '../support/split';
import { replaceField, startSnsPeer, type SnsPeer } from '../support/sns-peer';

// Amazon SNS as AWS delivers it (issue 25, decisions.md "Wave 3"), against a local HTTPS peer that plays
// SNS (test/support/sns-peer.ts): its own CA and signing certificate, trusted by the service through
// NODE_EXTRA_CA_CERTS and SNS_TRUSTED_HOSTS=127.0.0.1. The real SNS messages of
// ../shared/realworld/sns are re-signed with the peer's key (their certificate and subscribe URLs
// pointed at the peer, every other byte kept) and delivered as SNS delivers them: text/plain, the
// token as HTTP Basic from the subscription URL.

let svc: SplitServices;
let peer: SnsPeer;
const real = realworldFiles('sns');

beforeAll(async () => {
  peer = await startSnsPeer();
  svc = await startSplitServices({
    apiEnv: { SNS_TRUSTED_HOSTS: '127.0.0.1', NODE_EXTRA_CA_CERTS: peer.caFile },
  });
}, 300_000);
afterAll(async () => {
  await svc?.stop();
  await peer?.close();
});

async function tenant() {
  const m: TestMember = await createTenantWithUser(svc.t);
  const rw = (await mintTestToken(svc.t, m, 'read_write')).token;
  const ro = (await mintTestToken(svc.t, m, 'read')).token;
  // The subscription URL docs/alert-sources.md tells a user to give SNS: the token as the password.
  const endpoint = /--notification-endpoint '([^']+)'/
    .exec(docSnippet('docs/alert-sources.md', 'sns-subscribe.sh'))![1]!
    .replace('YOUR_OPSI_TOKEN', rw)
    .replace('https://', 'http://')
    .replace('opsi.example.com', new URL(svc.base).host);
  return { m, rw, ro, endpoint };
}
const events = async (token: string): Promise<any[]> =>
  (await call(svc.base, 'GET', '/api/v1/triage/events?limit=100', { token })).body.events;
const snsTool = async (token: string) =>
  (await call(svc.base, 'GET', '/api/v1/marketplace/tenant/tools', { token })).body.tools.find(
    (x: any) => x.id === 'cloudwatch_sns',
  );
/** The peer's URL for a corpus URL: same path and query, the peer's origin. */
const onPeer = (url: string) => {
  const u = new URL(url);
  return `${peer.origin}${u.pathname}${u.search}`;
};
const file = (name: string) => real.files.find((f) => f.name === name)!.text;

describe('Amazon SNS against a local SNS', () => {
  const NOTE = JSON.stringify({
    Type: 'Notification',
    MessageId: 'b6b5b1d4-0000-4000-8000-000000000001',
    TopicArn: 'arn:aws:sns:eu-west-1:111111111111:ops',
    Subject: 'Disk almost full on db-1',
    Message: 'Disk almost full on db-1\nsecond line',
    Timestamp: '2026-11-28T10:00:00.000Z',
    SignatureVersion: '1',
    Signature: 'x',
    SigningCertURL: 'https://x/x.pem',
    UnsubscribeURL: 'https://x/?Action=Unsubscribe',
  });

  it('a text/plain Notification with Basic auth is verified (versions 1 and 2) and accepted; the certificate is fetched once', async () => {
    const a = await tenant();
    const before = peer.requests.filter((r) => r.url.endsWith('.pem')).length;
    for (const version of ['1', '2'] as const) {
      const text = peer.resign(replaceField(NOTE, 'MessageId', `m-v${version}`), {}, version);
      const res = await peer.deliver(a.endpoint, text);
      expect(res.status, res.body).toBe(202);
      expect(JSON.parse(res.body)).toMatchObject({ accepted: 1 });
    }
    const listed = await events(a.ro);
    expect(listed.map((e) => [e.source, e.title, e.severity, e.status])).toEqual([
      ['sns', 'Disk almost full on db-1', 'medium', 'firing'],
      ['sns', 'Disk almost full on db-1', 'medium', 'firing'],
    ]);
    expect(peer.requests.filter((r) => r.url.endsWith('.pem')).length - before).toBeLessThanOrEqual(1);
  });

  it('an EventBridge event and a CloudWatch alarm in a Notification become their alerts; OK resolves the alarm', async () => {
    const a = await tenant();
    const event = {
      version: '0',
      id: 'eb-1',
      'detail-type': 'EC2 Instance State-change Notification',
      source: 'aws.ec2',
      account: '111111111111',
      time: new Date().toISOString(),
      region: 'eu-west-1',
      resources: ['arn:aws:ec2:eu-west-1:111111111111:instance/i-0abc'],
      detail: { 'instance-id': 'i-0abc', state: 'stopped' },
    };
    const alarm = (state: string) => ({
      AlarmName: 'api-5xx',
      AlarmArn: 'arn:aws:cloudwatch:eu-west-1:111111111111:alarm:api-5xx',
      NewStateValue: state,
      StateChangeTime: new Date().toISOString().replace('Z', '+0000'),
      Trigger: {
        MetricName: '5xx',
        Namespace: 'AWS/ApplicationELB',
        Dimensions: [{ name: 'LoadBalancer', value: 'app/web/1' }],
      },
    });
    let n = 0;
    for (const message of [event, alarm('ALARM'), alarm('OK')]) {
      // As EventBridge and CloudWatch publish: no Subject for the event.
      const { Subject: _subject, ...rest } = JSON.parse(NOTE);
      const fields = { ...rest, MessageId: `eb-${n++}`, Message: JSON.stringify(message) };
      const res = await peer.deliver(a.endpoint, peer.resign(JSON.stringify(fields), {}, '2'));
      expect(res.status, res.body).toBe(202);
    }
    const listed = (await events(a.ro)).reverse();
    expect(listed.map((e) => [e.source, e.title, e.status, e.count])).toEqual([
      ['eventbridge', 'EC2 Instance State-change Notification', 'firing', 1],
      ['cloudwatch', 'api-5xx', 'resolved', 2],
    ]);
  });

  it('a tampered signature, a certificate URL outside the trusted hosts, an http one: 403, nothing stored or fetched', async () => {
    const a = await tenant();
    const signed = peer.resign(NOTE);
    const tampered = replaceField(signed, 'Message', 'Disk almost full on db-2');
    const seen = peer.requests.length;
    const answers = [
      await peer.deliver(a.endpoint, tampered),
      // localhost is this same peer, but not a trusted host: never fetched.
      await peer.deliver(
        a.endpoint,
        peer.resign(NOTE, { SigningCertURL: peer.certUrl.replace('127.0.0.1', 'localhost') }),
      ),
      await peer.deliver(
        a.endpoint,
        peer.resign(NOTE, { SigningCertURL: peer.certUrl.replace('https:', 'http:') }),
      ),
      await peer.deliver(a.endpoint, replaceField(signed, 'Signature', '')),
      await peer.deliver(
        a.endpoint,
        peer.resign(NOTE, {}, '1').replace('"SignatureVersion":"1"', '"SignatureVersion":"3"'),
      ),
    ];
    for (const res of answers) {
      expect(res.status, res.body).toBe(403);
      expect(JSON.parse(res.body)).toEqual({ detail: expect.any(String) });
    }
    expect(JSON.parse(answers[1]!.body).detail).toMatch(/not a trusted SNS host/);
    expect(peer.requests.slice(seen).filter((r) => r.host.startsWith('localhost'))).toEqual([]);
    expect(await events(a.ro)).toEqual([]);
  });

  it('a SubscribeURL outside the trusted hosts: 403, never fetched, nothing recorded', async () => {
    const a = await tenant();
    // The shape of AWS's documented SubscriptionConfirmation, its SubscribeURL on an untrusted host.
    const confirmation = JSON.stringify({
      Type: 'SubscriptionConfirmation',
      MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
      Token: 't0k3n',
      TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
      Message: 'You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.',
      SubscribeURL: 'x',
      Timestamp: '2026-11-28T10:00:00.000Z',
      SignatureVersion: '1',
      Signature: 'x',
      SigningCertURL: 'x',
    });
    const text = peer.resign(confirmation, {
      SubscribeURL: `https://localhost:${new URL(peer.origin).port}/?Action=ConfirmSubscription&Token=t0k3n`,
    });
    const seen = peer.requests.length;
    const res = await peer.deliver(a.endpoint, text);
    expect(res.status, res.body).toBe(403);
    expect(JSON.parse(res.body).detail).toMatch(/SubscribeURL/);
    expect(peer.requests.slice(seen).filter((r) => r.url.includes('ConfirmSubscription'))).toEqual([]);
    expect(await snsTool(a.ro)).toBeUndefined();
  });
});

describe.skipIf(!!real.missing)(
  `the real SNS messages of ../shared/realworld/sns, re-signed by the local SNS ${real.missing ?? ''}`,
  () => {
    const notifications: Record<string, [string, string, string, string]> = {
      // file: [source, title, severity, status]
      'alerta-cloudwatch_notification_ALARM.json': ['cloudwatch', 'bucketbytesAlarm', 'high', 'firing'],
      'alerta-cloudwatch_notification_INSUFFICIENT_DATA.json': [
        'cloudwatch',
        'notificationCountAlarm',
        'info',
        'firing',
      ],
      'awsdocs-http-notification.json': ['sns', 'My First Message', 'medium', 'firing'],
      'springcloudaws-notificationMessage.json': ['sns', 'asdasd', 'medium', 'firing'],
    };
    for (const [name, expected] of Object.entries(notifications))
      it(`${name}: Notification accepted as ${expected.slice(0, 2).join(' ')}`, async () => {
        const a = await tenant();
        const text = peer.resign(file(name), {
          UnsubscribeURL: onPeer(JSON.parse(file(name)).UnsubscribeURL),
        });
        const res = await peer.deliver(a.endpoint, text);
        expect(res.status, res.body).toBe(202);
        const [event] = await events(a.ro);
        expect([event.source, event.title, event.severity, event.status]).toEqual(expected);
      });

    const confirmations = [
      'alerta-cloudwatch_subscription_confirmation.json',
      'awsdocs-http-subscription-confirmation.json',
      'springcloudaws-subscriptionConfirmation.json',
    ];
    for (const name of confirmations)
      it(`${name}: the service GETs the SubscribeURL and records the subscription`, async () => {
        const a = await tenant();
        const original = JSON.parse(file(name));
        const subscribe = onPeer(original.SubscribeURL);
        const seen = peer.requests.length;
        const res = await peer.deliver(a.endpoint, peer.resign(file(name), { SubscribeURL: subscribe }));
        expect(res.status, res.body).toBe(200);
        expect(JSON.parse(res.body)).toMatchObject({
          topic_arn: original.TopicArn,
          status: 'confirmed',
          subscription_arn: expect.stringContaining(original.TopicArn),
        });
        expect(peer.requests.slice(seen)).toContainEqual(
          expect.objectContaining({ method: 'GET', url: subscribe.slice(peer.origin.length) }),
        );
        const tool = await snsTool(a.ro);
        expect(tool.settings.subscriptions).toEqual([
          expect.objectContaining({ topic_arn: original.TopicArn, status: 'confirmed' }),
        ]);
        // Installing the integration again (owner) keeps the subscription the service recorded.
        const again = await call(svc.base, 'POST', '/api/v1/marketplace/tenant/tools', {
          token: a.rw,
          body: { tool_id: 'cloudwatch_sns' },
        });
        expect(again.status, again.text).toBeLessThan(300);
        expect((await snsTool(a.ro)).settings.subscriptions).toEqual(tool.settings.subscriptions);
        const audit = await call(svc.base, 'GET', '/api/v1/audit', { token: a.rw });
        expect(JSON.stringify(audit.body)).toContain('sns.subscription_confirmed');
        expect(await events(a.ro)).toEqual([]);
      });

    for (const name of [
      'awsdocs-http-unsubscribe-confirmation.json',
      'springcloudaws-unsubscribeConfirmation.json',
    ])
      it(`${name}: recorded as unsubscribed, nothing fetched`, async () => {
        const a = await tenant();
        const original = JSON.parse(file(name));
        const seen = peer.requests.length;
        const res = await peer.deliver(
          a.endpoint,
          peer.resign(file(name), { SubscribeURL: onPeer(original.SubscribeURL) }),
        );
        expect(res.status, res.body).toBe(200);
        expect(JSON.parse(res.body)).toMatchObject({ topic_arn: original.TopicArn, status: 'unsubscribed' });
        expect(peer.requests.slice(seen).filter((r) => r.url.includes('ConfirmSubscription'))).toEqual([]);
        expect((await snsTool(a.ro)).settings.subscriptions[0]).toMatchObject({ status: 'unsubscribed' });
      });

    for (const name of [
      'awslambdago-cloudwatch-alarm-multiple-metrics.json',
      'awslambdago-cloudwatch-alarm-single-metric.json',
      'notifyslack-cloudwatch_alarm_OK.json',
    ])
      it(`${name}: a Lambda event wrapper is 400 naming Records[].Sns, nothing stored`, async () => {
        const a = await tenant();
        const res = await call(svc.base, 'POST', '/api/v1/triage/alerts', {
          token: a.rw,
          headers: { 'content-type': 'application/json' },
          rawBody: file(name),
        });
        expect(res.status, res.text).toBe(400);
        expect(res.body.detail).toMatch(/Records\[\]\.Sns/);
        expect(await events(a.ro)).toEqual([]);
      });

    it('the Lambda wrappers’ CloudWatch alarms, delivered by SNS itself, are accepted (metric-math too; OK resolves)', async () => {
      const a = await tenant();
      const rows: string[][] = [];
      for (const name of [
        'awslambdago-cloudwatch-alarm-multiple-metrics.json',
        'notifyslack-cloudwatch_alarm_OK.json',
      ]) {
        const sns = JSON.parse(file(name)).Records[0].Sns;
        const message = JSON.stringify({
          Type: sns.Type,
          MessageId: sns.MessageId,
          TopicArn: sns.TopicArn,
          Subject: sns.Subject,
          Message: sns.Message,
          Timestamp: sns.Timestamp,
          SignatureVersion: '1',
          Signature: 'x',
          SigningCertURL: 'x',
          UnsubscribeURL: `${peer.origin}/?Action=Unsubscribe`,
        });
        const res = await peer.deliver(a.endpoint, peer.resign(message));
        expect(res.status, res.body).toBe(202);
      }
      for (const e of (await events(a.ro)).reverse()) rows.push([e.source, e.title, e.severity, e.status]);
      expect(rows).toEqual([
        ['cloudwatch', 'EXAMPLE', 'high', 'firing'],
        ['cloudwatch', 'DBMigrationRequired', 'high', 'resolved'],
      ]);
    });

    it('notifyslack-cloudwatch_alarm_bare_message.json: a bare CloudWatch alarm (a relay’s post) is accepted', async () => {
      const a = await tenant();
      const res = await call(svc.base, 'POST', '/api/v1/triage/alerts', {
        token: a.rw,
        headers: { 'content-type': 'application/json' },
        rawBody: file('notifyslack-cloudwatch_alarm_bare_message.json'),
      });
      expect(res.status, res.text).toBe(202);
      const [event] = await events(a.ro);
      expect([event.source, event.title, event.severity, event.status]).toEqual([
        'cloudwatch',
        'Example',
        'high',
        'firing',
      ]);
    });
  },
);
