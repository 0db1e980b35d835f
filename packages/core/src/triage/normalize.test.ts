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
