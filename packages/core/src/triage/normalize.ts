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
  // Early Alertmanager versions (and some relays) leave it out: the group's status stands for it.
  status: z.enum(['firing', 'resolved']).optional(),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()).nullable().optional(),
  startsAt: z.string().optional(),
  endsAt: z.string().optional(),
  // Empty in some relays' payloads: computed then, as for our JSON.
  fingerprint: z.string().max(200).optional(),
  generatorURL: z.string().optional(),
});
/**
 * Alertmanager's webhook (any version: "4" today, "3" and a numeric 0 from older releases; groupKey a
 * string or a number) and Grafana's webhook contact point (version "1", with orgId, state, title,
 * message): what they share is `alerts: [{status, labels}]` (decisions.md "Wave 3").
 */
const AlertmanagerPayload = z.object({
  version: z.union([z.string(), z.number()]).optional(),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string().optional(),
  alerts: z.array(AlertmanagerAlert).min(1),
  groupKey: z.union([z.string(), z.number()]).optional(),
  orgId: z.number().optional(),
  state: z.string().optional(),
});

/** Labels that name the alert's resource, most specific first. */
const RESOURCE_LABELS = [
  'resource',
  'arn',
  'resource_id',
  'db_instance',
  'dbinstanceidentifier',
  'instance_id',
  'load_balancer',
  'host',
  'instance',
];

/** Grafana's webhook contact point: version "1" with an orgId or Grafana's own state and title. */
function isGrafana(o: Record<string, unknown>): boolean {
  return String(o.version) === '1' && ('orgId' in o || ('state' in o && 'title' in o));
}

function alertmanager(body: Record<string, unknown>, now: string): NormalizedAlert[] {
  const parsed = AlertmanagerPayload.safeParse(body);
  if (!parsed.success)
    throw new BadRequest(
      `Not a valid Alertmanager or Grafana webhook payload (alerts: [{status, labels}]): ${issues(parsed.error)}`,
    );
  const source = isGrafana(body) ? 'grafana' : 'alertmanager';
  return parsed.data.alerts.map((a) => {
    const resourceLabel = RESOURCE_LABELS.find((l) => a.labels[l]);
    return {
      source,
      title: a.annotations?.summary || a.labels.alertname || `${source} alert`,
      severity: severityOf(a.labels.severity, 'medium'),
      fingerprint: a.fingerprint || hash(`${source}|${stableLabels(a.labels)}`),
      resource: resourceLabel ? a.labels[resourceLabel]! : null,
      labels: a.labels,
      starts_at: iso(a.startsAt, now),
      ends_at: null,
      status: a.status ?? parsed.data.status,
    };
  });
}

const Dimensions = z.array(z.object({ name: z.string(), value: z.string() }));
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
      MetricName: z.string().nullable().optional(),
      Namespace: z.string().nullable().optional(),
      Dimensions: Dimensions.nullable().optional(),
      // A metric-math alarm: its metrics, each with its own dimensions.
      Metrics: z
        .array(
          z
            .object({
              MetricStat: z
                .object({
                  Metric: z
                    .object({
                      Namespace: z.string().optional(),
                      MetricName: z.string().optional(),
                      Dimensions: Dimensions.optional(),
                    })
                    .loose(),
                })
                .loose()
                .optional(),
            })
            .loose(),
        )
        .optional(),
    })
    .loose()
    .nullable()
    .optional(),
});
type CloudWatchAlarm = z.infer<typeof CloudWatchAlarm>;

/**
 * CloudWatch dimensions that name the metric's resource (AWS's metric dimensions by namespace), most
 * specific first. A dimension's place in the alarm says nothing: S3's storage metrics list
 * `StorageType` before `BucketName`.
 */
const RESOURCE_DIMENSIONS = [
  'InstanceId',
  'DBInstanceIdentifier',
  'DBClusterIdentifier',
  'CacheClusterId',
  'BucketName',
  'FunctionName',
  'TableName',
  'QueueName',
  'TopicName',
  'StreamName',
  'LoadBalancer',
  'LoadBalancerName',
  'TargetGroup',
  'VolumeId',
  'NatGatewayId',
  'AutoScalingGroupName',
  'ServiceName',
  'ClusterName',
  'DomainName',
  'ApiName',
  'ApiId',
  'StateMachineArn',
];
/** Dimensions that qualify a metric and never name a resource. */
const QUALIFIER_DIMENSIONS = new Set([
  'StorageType',
  'FilterId',
  'Stage',
  'Method',
  'Resource',
  'Role',
  'EngineName',
  'DatabaseClass',
  'Currency',
  'Operation',
]);

/** The dimension value that names the alarm's resource: a known naming dimension, else the first that is not a qualifier. */
function resourceDimension(dimensions: Array<{ name: string; value: string }>): string | null {
  for (const name of RESOURCE_DIMENSIONS) {
    const d = dimensions.find((x) => x.name === name && x.value);
    if (d) return d.value;
  }
  return dimensions.find((x) => x.value && !QUALIFIER_DIMENSIONS.has(x.name))?.value ?? null;
}

function cloudwatch(a: CloudWatchAlarm, fallbackAt: string): NormalizedAlert {
  const metric = a.Trigger?.Metrics?.find((m) => m.MetricStat)?.MetricStat?.Metric;
  const dimensions = a.Trigger?.Dimensions ?? metric?.Dimensions ?? [];
  const namespace = a.Trigger?.Namespace ?? metric?.Namespace;
  const metricName = a.Trigger?.MetricName ?? metric?.MetricName;
  const text = `${a.AlarmName} ${a.AlarmDescription ?? ''}`;
  const labels: Record<string, string> = {};
  if (namespace) labels.namespace = namespace;
  if (metricName) labels.metric = metricName;
  if (a.Region) labels.region = a.Region;
  for (const d of dimensions) labels[d.name] = d.value;
  return {
    source: 'cloudwatch',
    title: a.AlarmName,
    severity:
      a.NewStateValue === 'INSUFFICIENT_DATA'
        ? 'info'
        : /critical|sev ?1|p1/i.test(text)
          ? 'critical'
          : 'high',
    fingerprint: hash(`cloudwatch|${a.AlarmArn ?? a.AlarmName}`),
    resource: resourceDimension(dimensions),
    labels,
    starts_at: iso(a.StateChangeTime, fallbackAt),
    ends_at: null,
    status: a.NewStateValue === 'OK' ? 'resolved' : 'firing',
  };
}

/** An Amazon EventBridge event (as an EventBridge rule publishes it to SNS). */
const EventBridgeEvent = z.object({
  'detail-type': z.string().min(1),
  source: z.string().min(1),
  id: z.string().optional(),
  time: z.string().optional(),
  region: z.string().optional(),
  account: z.string().optional(),
  resources: z.array(z.string()).optional(),
  detail: z.unknown().optional(),
});

const SnsNotification = z.object({
  Type: z.literal('Notification'),
  MessageId: z.string(),
  TopicArn: z.string(),
  Subject: z.string().nullable().optional(),
  Message: z.string(),
  Timestamp: z.string().optional(),
});

/**
 * An SNS Notification's alert: its Message is a CloudWatch alarm, an EventBridge event, or any other text
 * (title from Subject, else the first line). The route verifies the message's signature first.
 */
function sns(body: unknown, now: string): NormalizedAlert[] {
  const envelope = SnsNotification.safeParse(body);
  if (!envelope.success) throw new BadRequest(`Not an Amazon SNS Notification: ${issues(envelope.error)}`);
  const n = envelope.data;
  const at = iso(n.Timestamp, now);
  let message: unknown;
  try {
    message = JSON.parse(n.Message);
  } catch {
    message = undefined;
  }
  const alarm = CloudWatchAlarm.safeParse(message);
  if (alarm.success) return [cloudwatch(alarm.data, at)];
  const event = EventBridgeEvent.safeParse(message);
  if (event.success) {
    const e = event.data;
    const detail = (e.detail && typeof e.detail === 'object' ? e.detail : {}) as Record<string, unknown>;
    const labels: Record<string, string> = { 'detail-type': e['detail-type'], source: e.source };
    if (e.region) labels.region = e.region;
    if (e.account) labels.account = e.account;
    return [
      {
        source: 'eventbridge',
        title: (n.Subject || e['detail-type']).slice(0, 500),
        severity: severityOf(detail.severity, 'medium'),
        fingerprint: hash(`eventbridge|${e.id ?? n.MessageId}`),
        resource: e.resources?.[0] ?? null,
        labels,
        starts_at: iso(e.time, at),
        ends_at: null,
        status: 'firing',
      },
    ];
  }
  const firstLine = n.Message.split('\n')
    .find((l) => l.trim())
    ?.trim();
  return [
    {
      source: 'sns',
      title: (n.Subject?.trim() || firstLine || `SNS message on ${n.TopicArn}`).slice(0, 500),
      severity: 'medium',
      fingerprint: hash(`sns|${n.TopicArn}|${n.MessageId}`),
      resource: null,
      labels: { topic_arn: n.TopicArn },
      starts_at: at,
      ends_at: null,
      status: 'firing',
    },
  ];
}

/**
 * Recognises a posted body by its shape (our JSON; an Alertmanager or Grafana webhook; an SNS Notification
 * carrying a CloudWatch alarm, an EventBridge event or text; a bare CloudWatch alarm) and answers its
 * alerts. Anything else is a 400 that names what was wrong.
 */
export function normalizeAlerts(body: unknown, now = new Date().toISOString()): NormalizedAlert[] {
  let alerts: NormalizedAlert[];
  if (Array.isArray(body)) alerts = own(body, now);
  else if (body && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    if (Array.isArray(o.Records) && o.Records.some((r) => r && typeof r === 'object' && 'Sns' in r))
      throw new BadRequest(
        'This is an AWS Lambda event wrapping SNS records (Records[].Sns), not what SNS posts to an HTTPS subscription: subscribe this URL to the topic instead.',
      );
    if ('version' in o || 'receiver' in o) alerts = alertmanager(o, now);
    else if ('Type' in o && 'TopicArn' in o) alerts = sns(body, now);
    else if ('AlarmName' in o && 'NewStateValue' in o) {
      const alarm = CloudWatchAlarm.safeParse(o);
      if (!alarm.success) throw new BadRequest(`Not a valid CloudWatch alarm: ${issues(alarm.error)}`);
      alerts = [cloudwatch(alarm.data, now)];
    } else if (Array.isArray(o.alerts) && Object.keys(o).length === 1) alerts = own(o.alerts, now);
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
