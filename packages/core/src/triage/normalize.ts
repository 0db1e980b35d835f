import { createHash } from 'node:crypto';
import { z } from 'zod';
import { OwnAlert } from '@opsi/contracts';
import { BadRequest } from '../errors';

export type AlertSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/** An alert from any source, as the pipeline decides it. */
export interface NormalizedAlert {
  source: string;
  title: string;
  severity: AlertSeverity;
  fingerprint: string;
  /** What names the resource: an ARN, a native id, a name, or a CloudWatch dimension value. */
  resource: string | null;
  labels: Record<string, string>;
  starts_at: string;
  /** When the alert had already ended (historical alerts from the inventory). */
  ends_at: string | null;
  status: 'firing' | 'resolved';
}

/** At most this many alerts in one request. */
export const MAX_ALERTS_PER_REQUEST = 1000;

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function stableLabels(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

const SEVERITY_WORDS: Record<string, AlertSeverity> = {
  critical: 'critical',
  crit: 'critical',
  page: 'critical',
  p1: 'critical',
  error: 'high',
  high: 'high',
  major: 'high',
  p2: 'high',
  warning: 'medium',
  warn: 'medium',
  medium: 'medium',
  p3: 'medium',
  minor: 'low',
  low: 'low',
  p4: 'low',
  info: 'info',
  none: 'info',
};

function severityOf(word: unknown, fallback: AlertSeverity): AlertSeverity {
  return SEVERITY_WORDS[String(word ?? '').toLowerCase()] ?? fallback;
}

function iso(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || !value) return fallback;
  const d = new Date(value);
  // Alertmanager sends 0001-01-01T00:00:00Z for "no end".
  return Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1970 ? fallback : d.toISOString();
}

function issues(e: z.ZodError): string {
  return e.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || 'body'}: ${i.message}`)
    .join('; ');
}

function own(items: unknown[], now: string): NormalizedAlert[] {
  return items.map((item, n) => {
    const parsed = OwnAlert.safeParse(item);
    if (!parsed.success) throw new BadRequest(`Alert ${n + 1} is not a valid alert: ${issues(parsed.error)}`);
    const a = parsed.data;
    const labels = a.labels ?? {};
    return {
      source: a.source,
      title: a.title,
      severity: a.severity,
      fingerprint:
        a.fingerprint ?? hash(`${a.source}|${a.title}|${a.resource ?? ''}|${stableLabels(labels)}`),
      resource: a.resource ?? null,
      labels,
      starts_at: iso(a.starts_at, now),
      ends_at: null,
      status: a.status ?? 'firing',
    };
  });
}

const AlertmanagerAlert = z.object({
  status: z.enum(['firing', 'resolved']),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()).optional(),
  startsAt: z.string().optional(),
  endsAt: z.string().optional(),
  fingerprint: z.string().min(1).max(200).optional(),
  generatorURL: z.string().optional(),
});
const AlertmanagerPayload = z.object({
  version: z.literal('4'),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string(),
  alerts: z.array(AlertmanagerAlert).min(1),
  groupKey: z.string().optional(),
});

const RESOURCE_LABELS = [
  'resource',
  'arn',
  'resource_id',
  'db_instance',
  'dbinstanceidentifier',
  'instance_id',
  'load_balancer',
];

function alertmanager(body: unknown, now: string): NormalizedAlert[] {
  const parsed = AlertmanagerPayload.safeParse(body);
  if (!parsed.success)
    throw new BadRequest(`Not a valid Alertmanager webhook (version 4) payload: ${issues(parsed.error)}`);
  return parsed.data.alerts.map((a) => {
    const resourceLabel = RESOURCE_LABELS.find((l) => a.labels[l]);
    return {
      source: 'alertmanager',
      title: a.annotations?.summary ?? a.labels.alertname ?? 'Alertmanager alert',
      severity: severityOf(a.labels.severity, 'medium'),
      fingerprint: a.fingerprint ?? hash(`alertmanager|${stableLabels(a.labels)}`),
      resource: resourceLabel ? a.labels[resourceLabel]! : null,
      labels: a.labels,
      starts_at: iso(a.startsAt, now),
      ends_at: null,
      status: a.status,
    };
  });
}

const CloudWatchAlarm = z.object({
  AlarmName: z.string().min(1),
  AlarmDescription: z.string().nullable().optional(),
  AlarmArn: z.string().optional(),
  NewStateValue: z.enum(['ALARM', 'OK', 'INSUFFICIENT_DATA']),
  NewStateReason: z.string().optional(),
  StateChangeTime: z.string().optional(),
  Region: z.string().optional(),
  AWSAccountId: z.string().optional(),
  Trigger: z
    .object({
      MetricName: z.string().optional(),
      Namespace: z.string().optional(),
      Dimensions: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
    })
    .loose()
    .optional(),
});
const SnsNotification = z.object({
  Type: z.literal('Notification'),
  MessageId: z.string(),
  TopicArn: z.string(),
  Message: z.string(),
  Timestamp: z.string().optional(),
});

function sns(body: unknown, now: string): NormalizedAlert[] {
  const envelope = SnsNotification.safeParse(body);
  if (!envelope.success)
    throw new BadRequest(
      `Not an Amazon SNS Notification carrying a CloudWatch alarm: ${issues(envelope.error)}`,
    );
  let message: unknown;
  try {
    message = JSON.parse(envelope.data.Message);
  } catch {
    throw new BadRequest('The SNS Message is not JSON: only CloudWatch alarm notifications are accepted.');
  }
  const alarm = CloudWatchAlarm.safeParse(message);
  if (!alarm.success)
    throw new BadRequest(`The SNS Message is not a CloudWatch alarm: ${issues(alarm.error)}`);
  const a = alarm.data;
  const dimension = a.Trigger?.Dimensions?.[0];
  const text = `${a.AlarmName} ${a.AlarmDescription ?? ''}`;
  const labels: Record<string, string> = {};
  if (a.Trigger?.Namespace) labels.namespace = a.Trigger.Namespace;
  if (a.Trigger?.MetricName) labels.metric = a.Trigger.MetricName;
  if (a.Region) labels.region = a.Region;
  for (const d of a.Trigger?.Dimensions ?? []) labels[d.name] = d.value;
  return [
    {
      source: 'cloudwatch',
      title: a.AlarmName,
      severity:
        a.NewStateValue === 'INSUFFICIENT_DATA'
          ? 'info'
          : /critical|sev ?1|p1/i.test(text)
            ? 'critical'
            : 'high',
      fingerprint: hash(`cloudwatch|${a.AlarmArn ?? a.AlarmName}`),
      resource: dimension?.value ?? null,
      labels,
      starts_at: iso(a.StateChangeTime, iso(envelope.data.Timestamp, now)),
      ends_at: null,
      status: a.NewStateValue === 'OK' ? 'resolved' : 'firing',
    },
  ];
}

/**
 * Recognises a posted body by its shape (our JSON, an Alertmanager webhook v4, an SNS notification of a
 * CloudWatch alarm) and answers its alerts. Anything else is a 400 that names what was wrong.
 */
export function normalizeAlerts(body: unknown, now = new Date().toISOString()): NormalizedAlert[] {
  let alerts: NormalizedAlert[];
  if (Array.isArray(body)) alerts = own(body, now);
  else if (body && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    if ('version' in o || 'receiver' in o) alerts = alertmanager(body, now);
    else if ('Type' in o && 'TopicArn' in o) alerts = sns(body, now);
    else if (Array.isArray(o.alerts) && Object.keys(o).length === 1) alerts = own(o.alerts, now);
    else alerts = own([body], now);
  } else throw new BadRequest('Send an alert as a JSON object, or a batch as an array.');
  if (alerts.length === 0) throw new BadRequest('The batch holds no alert.');
  if (alerts.length > MAX_ALERTS_PER_REQUEST)
    throw new BadRequest(`At most ${MAX_ALERTS_PER_REQUEST} alerts per request.`);
  return alerts;
}

/** An alert event of the inventory (a scan brought it in) as the pipeline sees it. */
export function normalizeInventoryAlert(e: {
  name: string;
  at: Date;
  fingerprint: string | null;
  severity: string | null;
  service: string | null;
  arns: string[];
  payload: Record<string, unknown>;
}): NormalizedAlert {
  const labels: Record<string, string> = {};
  const payloadLabels = (e.payload.labels ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(payloadLabels)) if (typeof v === 'string') labels[k] = v;
  if (e.service) labels.service = e.service;
  const endsAt = typeof e.payload.endsAt === 'string' ? e.payload.endsAt : null;
  return {
    source: typeof e.payload.source === 'string' ? e.payload.source : 'inventory',
    title: e.name,
    severity: severityOf(e.severity, 'medium'),
    fingerprint: e.fingerprint ?? hash(`inventory|${e.name}|${e.arns.join(',')}`),
    resource: e.arns[0] ?? null,
    labels,
    starts_at: e.at.toISOString(),
    ends_at: endsAt ? iso(endsAt, e.at.toISOString()) : null,
    // A past alert that already ended is replayed as fired-then-ended, so it still forms its incident.
    status: 'firing',
  };
}
