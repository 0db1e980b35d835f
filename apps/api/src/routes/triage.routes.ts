import {
  TriageAlertsAccepted,
  TriageAlertsBody,
  TriageEventList,
  TriageEventsQuery,
  TriageOverview,
  TriageRuleList,
} from '@opsi/contracts';
import {
  acceptAlerts,
  batchDecisions,
  listTriageEvents,
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

export const postTriageAlerts = defineRoute({
  method: 'POST',
  path: '/api/v1/triage/alerts',
  auth: 'read_write',
  summary: 'Send alerts to triage: our JSON, an Alertmanager webhook (v4), or an SNS CloudWatch alarm',
  description:
    'Answers 202 {accepted, batch_id, pending, events: [{id, action, incident_id}]} once the triage job has decided the batch (within TRIAGE_WAIT_MS; if not, pending is true and events is empty: GET /api/v1/triage/events shows them). Anything that is not one of the three shapes is 400 and stores nothing. At most 1000 alerts per request.',
  tags: ['triage'],
  body: TriageAlertsBody,
  responses: { 202: TriageAlertsAccepted },
  errors: [400, 413, 415, 503],
  handler: async ({ deps, auth, body }) => {
    // Backpressure before anything is stored: 503 when the tenant's triage backlog is at its bound.
    const place = await deps.runs.producer.admit('triage', auth.tenant.id);
    const { batchId, accepted } = await acceptAlerts(deps.db, auth.tenant.id, body);
    const events = await deps.runs.triageEvents();
    const job = await deps.runs.producer.enqueue(
      'triage',
      'alerts',
      { tenant_id: auth.tenant.id, batch_id: batchId },
      { jobId: batchId, priority: place.priority },
    );
    let pending = false;
    let result: { decisions?: TriageDecision[] } | undefined;
    try {
      result = (await job.waitUntilFinished(events, deps.config.TRIAGE_WAIT_MS)) as typeof result;
    } catch {
      pending = true; // not decided in time (or failed and retrying): the events show it later
    }
    // A retried job's result holds only what its last attempt decided: then read the batch back.
    const decided = pending
      ? []
      : result?.decisions?.length === accepted
        ? result.decisions
        : await batchDecisions(deps.db, auth.tenant.id, batchId);
    return reply(202, {
      accepted,
      batch_id: batchId,
      pending,
      events: decided.map((d) => ({ id: d.event_id, action: d.action, incident_id: d.incident_id })),
    });
  },
});

export const triageRoutes = [getTriageOverview, getTriageEvents, getTriageRules, postTriageAlerts];
