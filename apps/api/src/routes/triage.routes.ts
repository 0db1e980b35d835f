import {
  CreateTriageRuleBody,
  PatchTriageRuleBody,
  TriageRule,
  TriageRuleParams,
  SnsSubscriptionRecorded,
  TriageAlertsAccepted,
  TriageAlertsBody,
  TriageEventList,
  TriageEventsQuery,
  TriageOverview,
  TriageRuleList,
} from '@opsi/contracts';
import {
  createTriageIntake,
  createTriageRule,
  deleteTriageRule,
  updateTriageRule,
  listTriageEvents,
  normalizeAlerts,
  isSnsMessage,
  verifySnsMessage,
  confirmSnsSubscription,
  recordSnsSubscription,
  listTriageRules,
  triageOverview,
  type TriageDecision,
} from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import type { ApiDeps } from '../deps';

const windows = (deps: ApiDeps) => ({
  db: deps.db,
  dedupeWindowMinutes: deps.config.TRIAGE_DEDUPE_WINDOW_MINUTES,
  correlationWindowMinutes: deps.config.TRIAGE_CORRELATION_WINDOW_MINUTES,
});

export const getTriageOverview = defineRoute({
  method: 'GET',
  path: '/api/v1/triage/overview',
  auth: 'read',
  summary:
    'The triage pipeline over the last 24 h (received, deduplicated, suppressed, correlated, incidents opened)',
  tags: ['triage'],
  responses: { 200: TriageOverview },
  handler: ({ deps, auth }) => triageOverview(windows(deps), auth.tenant.id),
});

export const getTriageEvents = defineRoute({
  method: 'GET',
  path: '/api/v1/triage/events',
  auth: 'read',
  summary: 'Triage events, newest first: one per alert group, with its count and decided action',
  tags: ['triage'],
  query: TriageEventsQuery,
  responses: { 200: TriageEventList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    events: await listTriageEvents(deps.db, auth.tenant.id, query.limit),
  }),
});

export const getTriageRules = defineRoute({
  method: 'GET',
  path: '/api/v1/triage/rules',
  auth: 'read',
  summary: "Triage rules that apply: the tenant's own, then the built-in ones",
  tags: ['triage'],
  responses: { 200: TriageRuleList },
  handler: async ({ deps, auth }) => ({ rules: await listTriageRules(windows(deps), auth.tenant.id) }),
});

export const postTriageRule = defineRoute({
  method: 'POST',
  path: '/api/v1/triage/rules',
  auth: 'read_write',
  summary: 'Write a triage rule of the tenant (dedupe, suppress, correlate or route)',
  description:
    "The tenant's rules come before the built-in ones: for each kind, the first enabled rule whose match selects an alert decides (a suppress rule suppresses it and it is counted as suppressed; a dedupe rule sets its window; a correlate rule its window and graph depth; a route rule whether it opens an incident, and at what severity). Applies from the next triage batch. Unknown kinds, match keys or action fields are 400 naming the field. Audit-logged.",
  tags: ['triage'],
  body: CreateTriageRuleBody,
  responses: { 201: TriageRule },
  errors: [400, 415],
  handler: async ({ deps, auth, body }) => reply(201, await createTriageRule(deps.db, auth, body)),
});

export const patchTriageRule = defineRoute({
  method: 'PATCH',
  path: '/api/v1/triage/rules/:id',
  auth: 'read_write',
  summary: "Change a tenant triage rule: name, enabled, match, action (checked against the rule's kind)",
  description:
    "A built-in rule (id builtin:…) is 409: write a rule of the same kind that matches the alerts instead (it comes first). Another tenant's rule is 404. Audit-logged.",
  tags: ['triage'],
  params: TriageRuleParams,
  body: PatchTriageRuleBody,
  responses: { 200: TriageRule },
  errors: [400, 404, 409, 415],
  handler: ({ deps, auth, params, body }) => updateTriageRule(windows(deps), auth, params.id, body),
});

export const deleteTriageRuleRoute = defineRoute({
  method: 'DELETE',
  path: '/api/v1/triage/rules/:id',
  auth: 'read_write',
  summary: 'Delete a tenant triage rule (204)',
  description: "A built-in rule is 409; another tenant's rule is 404. Audit-logged.",
  tags: ['triage'],
  params: TriageRuleParams,
  responses: { 204: null },
  errors: [404, 409],
  handler: async ({ deps, auth, params }) => {
    await deleteTriageRule(windows(deps), auth, params.id);
    return reply(204);
  },
});

export const postTriageAlerts = defineRoute({
  method: 'POST',
  path: '/api/v1/triage/alerts',
  auth: 'read_write',
  summary:
    'Send alerts to triage: our JSON, an Alertmanager or Grafana webhook, or Amazon SNS (CloudWatch, EventBridge, text)',
  description:
    "Answers 202 {accepted, batch_id, pending, events: [{id, action, incident_id}]} once the triage job has decided the batch (within TRIAGE_WAIT_MS; if not, pending is true and events is empty: GET /api/v1/triage/events shows them). Concurrent requests of one tenant are coalesced into one batch (group commit), so batch_id may be shared with them; events are this request's own alerts, in order. Anything that is not one of the accepted shapes is 400 and stores nothing. At most 1000 alerts per request. The token may come as HTTP Basic (any user, the token as password), as SNS sends it from https://opsi:<token>@host/api/v1/triage/alerts. An SNS message (text/plain) is verified first (SignatureVersion 1 or 2, certificate over HTTPS from SNS_TRUSTED_HOSTS): unsigned, forged or from another host is 403 and stores nothing. A SubscriptionConfirmation is confirmed by GET of its SubscribeURL and recorded on the tenant's cloudwatch_sns integration and in the audit log (200); an UnsubscribeConfirmation is recorded (200).",
  tags: ['triage'],
  body: TriageAlertsBody,
  bodyTypes: ['json', 'sns'],
  responses: { 200: SnsSubscriptionRecorded, 202: TriageAlertsAccepted },
  errors: [400, 413, 415, 503],
  handler: async ({ deps, auth, body }) => {
    let alerts;
    if (isSnsMessage(body)) {
      // Verified before anything else: a forged message stores nothing and makes us fetch nothing.
      const m = await verifySnsMessage(body, deps.config.SNS_TRUSTED_HOSTS);
      if (m.Type !== 'Notification') {
        const confirmed =
          m.Type === 'SubscriptionConfirmation'
            ? await confirmSnsSubscription(m, deps.config.SNS_TRUSTED_HOSTS)
            : { subscription_arn: null };
        const actor = {
          type: 'user' as const,
          id: auth.user.id,
          email: auth.user.email,
          token_id: auth.kind === 'token' ? auth.token.id : null,
        };
        return reply(
          200,
          await recordSnsSubscription(deps.db, auth.tenant.id, actor, m, confirmed.subscription_arn),
        );
      }
      alerts = normalizeAlerts(m);
    } else alerts = normalizeAlerts(body);
    // Validated here (a 400 stores nothing); then coalesced with concurrent requests of the tenant, whose
    // batch is refused (503) before anything is stored when the tenant's triage backlog is at its bound.
    return reply(202, await intake(deps).submit(auth.tenant.id, alerts));
  },
});

const intakes = new WeakMap<ApiDeps, ReturnType<typeof createTriageIntake>>();

/** The API process's triage intake (group commit per tenant), one per set of deps. */
function intake(deps: ApiDeps) {
  let i = intakes.get(deps);
  if (!i) {
    i = createTriageIntake({
      db: deps.db,
      maxItems: deps.config.TRIAGE_BATCH_MAX_ALERTS,
      maxInFlight: deps.config.TRIAGE_BATCH_IN_FLIGHT,
      admit: (tenantId) => deps.runs.producer.admit('triage', tenantId),
      enqueueAndWait: async (tenantId, batchId, inboxIds, admitted) => {
        const events = await deps.runs.triageEvents();
        const job = await deps.runs.producer.enqueue(
          'triage',
          'alerts',
          { tenant_id: tenantId, batch_id: batchId, inbox_ids: inboxIds },
          { jobId: batchId, ...admitted },
        );
        try {
          return (await job.waitUntilFinished(events, deps.config.TRIAGE_WAIT_MS)) as {
            decisions?: TriageDecision[];
          };
        } catch {
          return undefined; // not decided in time (or failed and retrying): the events show it later
        }
      },
    });
    intakes.set(deps, i);
  }
  return i;
}

export const triageRoutes = [
  getTriageOverview,
  getTriageEvents,
  getTriageRules,
  postTriageRule,
  patchTriageRule,
  deleteTriageRuleRoute,
  postTriageAlerts,
];
