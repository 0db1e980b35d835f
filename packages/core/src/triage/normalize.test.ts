import { describe, expect, it } from 'vitest';
import { realworldFiles } from '@opsi/test-support/realworld';
import { normalizeAlerts } from './normalize';

// The resource each real Alertmanager and Grafana alert names (what triage matches against the
// inventory), read from ../shared/realworld/alertmanager; the HTTP side is in
// apps/api/src/alert-senders.int.test.ts.
const real = realworldFiles('alertmanager');
const RESOURCES: Record<string, Array<string | null>> = {
  'alerta-prometheus_v3_numeric_groupKey.json': ['host2'],
  'alerta-prometheus_v4_alert.json': [null],
  'bougou-alert-mixed.json': ['10.30.1.160', '10.30.1.161', '10.30.1.162', '10.30.1.163'],
  'bougou-alert-resolved.json': ['10.30.1.161', '10.30.1.164'],
  'bougou-grafana-alert.json': [null],
  'dingtalk-PlaygroundDemoAlert.json': ['server01.int:9100', 'server02.int:9100'],
  'imgix-alert_payload.json': ['localhost:1234', 'localhost:5678'],
  'msteams-prom_post_request.json': ['instance-with-hyphen_and_underscore'],
  'prometheus_bot-noGenURL-resolved.json': [
    'mail01.example.com',
    'mail02.example.com',
    'mail02.example.com',
    'smpt03.example.com',
    'smpt01.example.com',
    'smpt02.example.com',
    'smpt04.example.com',
    'mail01.example.com',
  ],
  'zulip-alert-firing.json': ['andromeda', 'andromeda'],
  'zulip-single_alert-resolved.json': ['andromeda'],
};

describe.skipIf(!!real.missing)(
  `the resources real alerts name (../shared/realworld/alertmanager) ${real.missing ?? ''}`,
  () => {
    it('every file is known here, and each alert names its host or instance', () => {
      expect(real.files.map((f) => f.name).sort()).toEqual(Object.keys(RESOURCES).sort());
      for (const { name, text } of real.files)
        expect(
          normalizeAlerts(JSON.parse(text)).map((a) => a.resource),
          name,
        ).toEqual(RESOURCES[name]);
    });
    it('an empty fingerprint is computed from the labels; a given one is kept', () => {
      const imgix = normalizeAlerts(JSON.parse(real.files.find((f) => f.name.startsWith('imgix'))!.text));
      expect(imgix[0]!.fingerprint).toMatch(/^[0-9a-f]{16}$/);
      expect(imgix[0]!.fingerprint).not.toBe(imgix[1]!.fingerprint);
      const zulip = normalizeAlerts(
        JSON.parse(real.files.find((f) => f.name === 'zulip-alert-firing.json')!.text),
      );
      expect(zulip.map((a) => a.fingerprint)).toEqual(['a1bc48475b20e73d', 'c2ea85182f28cbd9']);
    });
  },
);

// The same for the real SNS messages of ../shared/realworld/sns: each Notification's alert (the Lambda
// wrappers' SNS record posted as SNS posts it), with the resource its CloudWatch alarm names.
const sns = realworldFiles('sns');
const SNS_ALERTS: Record<string, [string, string, string, string, string | null] | 'not a notification'> = {
  // S3's storage metrics list StorageType first: the bucket is the resource.
  'alerta-cloudwatch_notification_ALARM.json': [
    'cloudwatch',
    'bucketbytesAlarm',
    'high',
    'firing',
    'try.alerta.io',
  ],
  'alerta-cloudwatch_notification_INSUFFICIENT_DATA.json': [
    'cloudwatch',
    'notificationCountAlarm',
    'info',
    'firing',
    'alerta-test',
  ],
  'alerta-cloudwatch_subscription_confirmation.json': 'not a notification',
  'awsdocs-http-notification.json': ['sns', 'My First Message', 'medium', 'firing', null],
  'awsdocs-http-subscription-confirmation.json': 'not a notification',
  'awsdocs-http-unsubscribe-confirmation.json': 'not a notification',
  'awslambdago-cloudwatch-alarm-multiple-metrics.json': [
    'cloudwatch',
    'EXAMPLE',
    'high',
    'firing',
    'TestInstance',
  ],
  'awslambdago-cloudwatch-alarm-single-metric.json': [
    'cloudwatch',
    'EXAMPLE',
    'high',
    'firing',
    'TestInstance',
  ],
  'notifyslack-cloudwatch_alarm_OK.json': ['cloudwatch', 'DBMigrationRequired', 'high', 'resolved', null],
  'notifyslack-cloudwatch_alarm_bare_message.json': ['cloudwatch', 'Example', 'high', 'firing', null],
  'springcloudaws-notificationMessage.json': ['sns', 'asdasd', 'medium', 'firing', null],
  'springcloudaws-subscriptionConfirmation.json': 'not a notification',
  'springcloudaws-unsubscribeConfirmation.json': 'not a notification',
};

describe.skipIf(!!sns.missing)(
  `the alerts real SNS messages carry (../shared/realworld/sns) ${sns.missing ?? ''}`,
  () => {
    it('every file is known here; each Notification is one alert with its title, severity, status and resource', () => {
      expect(sns.files.map((f) => f.name).sort()).toEqual(Object.keys(SNS_ALERTS).sort());
      for (const { name, text } of sns.files) {
        const body = JSON.parse(text);
        const message = body.Records ? body.Records[0].Sns : body;
        const want = SNS_ALERTS[name]!;
        if (want === 'not a notification') {
          expect(() => normalizeAlerts(message), name).toThrow(/Notification/);
          continue;
        }
        expect(
          normalizeAlerts(message).map((a) => [a.source, a.title, a.severity, a.status, a.resource]),
          name,
        ).toEqual([want]);
      }
    });

    it('a naming dimension wins wherever it stands; qualifiers alone name nothing', () => {
      const alarm = (Dimensions: Array<{ name: string; value: string }>) => ({
        AlarmName: 'a',
        NewStateValue: 'ALARM',
        Trigger: { Namespace: 'AWS/X', MetricName: 'm', Dimensions },
      });
      const resource = (d: Array<{ name: string; value: string }>) => normalizeAlerts(alarm(d))[0]!.resource;
      expect(
        resource([
          { name: 'TargetGroup', value: 'tg' },
          { name: 'LoadBalancer', value: 'app/web/1' },
        ]),
      ).toBe('app/web/1');
      expect(
        resource([
          { name: 'Stage', value: 'prod' },
          { name: 'ApiName', value: 'orders' },
        ]),
      ).toBe('orders');
      expect(resource([{ name: 'StorageType', value: 'StandardStorage' }])).toBeNull();
      expect(resource([{ name: 'Custom', value: 'svc-1' }])).toBe('svc-1');
      expect(resource([])).toBeNull();
    });
  },
);
