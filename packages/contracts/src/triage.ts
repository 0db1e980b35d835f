import { z } from 'zod';
import { SEVERITIES } from './vocabulary';
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

const Word = z.string().trim().min(1).max(200);
const OneOrMore = <T extends z.ZodType>(t: T) => z.union([t, z.array(t).min(1).max(100)]);
const AlertSeverityName = z.enum(SEVERITIES);

/** Which alerts a tenant rule selects: every key given must match (an empty match selects every alert). */
export const TriageRuleMatch = z
  .object({
    fingerprint: OneOrMore(Word).optional(),
    severity: OneOrMore(AlertSeverityName).optional(),
    source: OneOrMore(Word).optional(),
    status: OneOrMore(z.enum(['firing', 'resolved'])).optional(),
    title_contains: Word.optional(),
    labels: z.record(z.string().trim().min(1).max(100), z.string().max(500)).optional(),
  })
  .strict()
  .meta({
    id: 'TriageRuleMatch',
    description:
      'fingerprint ("*" for any), severity, source and status take one value or a list; title_contains is case-insensitive; labels must all be equal. Every key given must match.',
  });

/** What a rule of each kind does to the alerts it matches. */
export const TriageRuleActions = {
  dedupe: z
    .object({ window_minutes: z.number().int().min(1).max(1440) })
    .strict()
    .describe('Repeats of a matching alert within window_minutes are one event with a count.'),
  suppress: z
    .object({ suppress: z.boolean().default(true) })
    .strict()
    .describe(
      'suppress true: matching alerts are counted as suppressed, never paged; false: they are not suppressed (a built-in suppress rule is overridden).',
    ),
  correlate: z
    .object({
      window_minutes: z.number().int().min(1).max(10_080).optional(),
      graph_depth: z.number().int().min(1).max(10).optional(),
    })
    .strict()
    .describe(
      'Matching alerts join open incidents alerted within window_minutes, on the same resource or one within graph_depth hops.',
    ),
  route: z
    .object({
      open_incident: z.boolean(),
      severity: z.enum(['SEV1', 'SEV2', 'SEV3', 'SEV4']).optional(),
    })
    .strict()
    .describe(
      'open_incident true: a matching firing alert that joins no incident opens one (at severity, else by the alert severity); false: it opens none.',
    ),
} as const;

const ruleBody = <K extends keyof typeof TriageRuleActions>(kind: K) =>
  z
    .object({
      name: z.string().trim().min(1).max(200),
      kind: z.literal(kind),
      match: TriageRuleMatch.default({}),
      action: TriageRuleActions[kind],
      enabled: z.boolean().default(true),
    })
    .strict();

export const CreateTriageRuleBody = z
  .discriminatedUnion('kind', [
    ruleBody('dedupe'),
    ruleBody('suppress').extend({ action: TriageRuleActions.suppress.default({ suppress: true }) }),
    ruleBody('correlate').extend({ action: TriageRuleActions.correlate.default({}) }),
    ruleBody('route'),
  ])
  .meta({
    id: 'CreateTriageRuleBody',
    description:
      'kind is dedupe, suppress, correlate or route; action depends on it (dedupe {window_minutes}, suppress {suppress}, correlate {window_minutes?, graph_depth?}, route {open_incident, severity?}). A tenant rule comes before the built-in ones: the first enabled rule of a kind that matches an alert decides.',
  });

export const PatchTriageRuleBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    enabled: z.boolean().optional(),
    match: TriageRuleMatch.optional(),
    /** Checked against the rule's kind. */
    action: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'Give at least one of name, enabled, match, action.' })
  .meta({
    id: 'PatchTriageRuleBody',
    description: "action is checked against the rule's kind (see CreateTriageRuleBody).",
  });

export const TriageRuleParams = z.object({ id: z.string().min(1).max(200) });

/** Our own alert JSON (one alert); a batch is an array of these or {alerts: [...]}. */
export const OwnAlert = z
  .object({
    title: z.string().trim().min(1).max(500),
    severity: z.enum(SEVERITIES),
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
    'One alert or a batch: our JSON ({title, severity, source, fingerprint?, resource?, labels?, starts_at?}, an array of them, or {alerts: [...]}); an Alertmanager webhook payload (any version) or Grafana\'s webhook contact point (version "1"), whose alerts: [{status, labels}]; an Amazon SNS message as SNS posts it (text/plain with x-amz-sns-message-type; signature verified), whose Notification Message is a CloudWatch alarm, an EventBridge event or any text; or a bare CloudWatch alarm. Anything else is 400 and stores nothing.',
});

/** The answer to an SNS SubscriptionConfirmation (confirmed) or UnsubscribeConfirmation (recorded). */
export const SnsSubscriptionRecorded = z
  .object({
    topic_arn: z.string(),
    status: z.enum(['confirmed', 'unsubscribed']),
    subscription_arn: z.string().nullable(),
    confirmed_at: Timestamp.nullable(),
    unsubscribed_at: Timestamp.nullable(),
  })
  .meta({ id: 'SnsSubscriptionRecorded' });

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
