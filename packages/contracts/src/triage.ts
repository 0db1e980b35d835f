import { z } from 'zod';
import { Timestamp } from './common';
import { GraphNode } from './graph';

export const TriageActionName = z.enum([
  'new',
  'deduplicated',
  'suppressed',
  'correlated',
  'incident_opened',
]);

export const TriageEventsQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

export const TriageEvent = z
  .object({
    id: z.number().int(),
    at: Timestamp,
    source: z.string(),
    fingerprint: z.string(),
    title: z.string(),
    severity: z.string(),
    resource: GraphNode.nullable(),
    action: TriageActionName,
    incident_id: z.string().nullable(),
    count: z.number().int(),
    first_at: Timestamp,
    last_at: Timestamp,
    status: z.string(),
  })
  .meta({ id: 'TriageEvent' });

export const TriageEventList = z.object({ events: z.array(TriageEvent) }).meta({ id: 'TriageEventList' });

export const TriageOverview = z
  .object({
    pipeline: z.object({
      received: z.number().int(),
      deduplicated: z.number().int(),
      suppressed: z.number().int(),
      correlated: z.number().int(),
      incidents_opened: z.number().int(),
    }),
    open_alerts: z.number().int(),
    rules: z.number().int(),
    last_event_at: Timestamp.nullable(),
  })
  .meta({ id: 'TriageOverview' });

export const TriageRule = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(['dedupe', 'suppress', 'correlate', 'route']),
    match: z.record(z.string(), z.unknown()),
    action: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    built_in: z.boolean(),
  })
  .meta({ id: 'TriageRule' });

export const TriageRuleList = z.object({ rules: z.array(TriageRule) }).meta({ id: 'TriageRuleList' });

/** Our own alert JSON (one alert); a batch is an array of these or {alerts: [...]}. */
export const OwnAlert = z
  .object({
    title: z.string().trim().min(1).max(500),
    severity: z.enum(['critical', 'high', 'medium', 'low', 'info']),
    source: z.string().trim().min(1).max(100),
    fingerprint: z.string().trim().min(1).max(200).optional(),
    resource: z.string().trim().min(1).max(2048).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    starts_at: Timestamp.optional(),
    status: z.enum(['firing', 'resolved']).optional(),
  })
  .strict()
  .meta({ id: 'Alert' });

/** The body is read as JSON and recognised by shape in the service (ours, Alertmanager v4, SNS). */
export const TriageAlertsBody = z.unknown().meta({
  id: 'TriageAlertsBody',
  description:
    'One alert or a batch: our JSON ({title, severity, source, fingerprint?, resource?, labels?, starts_at?}, an array of them, or {alerts: [...]}), an Alertmanager webhook payload (version "4"), or an Amazon SNS Notification whose Message is a CloudWatch alarm. Anything else is 400 and stores nothing.',
});

export const TriageAlertsAccepted = z
  .object({
    accepted: z.number().int(),
    batch_id: z.string(),
    pending: z.boolean(),
    events: z.array(
      z.object({ id: z.number().int(), action: TriageActionName, incident_id: z.string().nullable() }),
    ),
  })
  .meta({ id: 'TriageAlertsAccepted' });
