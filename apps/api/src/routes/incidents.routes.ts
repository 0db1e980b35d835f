import { z } from 'zod';
import {
  CreateIncidentBody,
  Incident,
  IncidentIdParams,
  IncidentList,
  IncidentsQuery,
  InvestigationStarted,
  PatchIncidentBody,
  Timeline,
  TimelineEvent,
  TimelineNoteBody,
  TimelineQuery,
  TimelineStreamQuery,
  WarRoom,
} from '@opsi/contracts';
import {
  AppError,
  addTimelineNote,
  createIncident,
  getIncident,
  listIncidents,
  listTimeline,
  openWarRoom,
  patchIncident,
  startInvestigation,
} from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import { streamTimeline } from '../http/sse';
import type { ApiDeps } from '../deps';

const incidentDeps = (deps: ApiDeps) => ({ db: deps.db, timeline: deps.runs.timeline });

export const getIncidents = defineRoute({
  method: 'GET',
  path: '/api/v1/incidents',
  auth: 'read',
  summary: 'Incidents, newest first; filters status and severity; limit (1..500, default 50), offset',
  tags: ['incidents'],
  query: IncidentsQuery,
  responses: { 200: IncidentList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    incidents: await listIncidents(deps.db, auth.tenant.id, query),
  }),
});

export const postIncident = defineRoute({
  method: 'POST',
  path: '/api/v1/incidents',
  auth: 'read_write',
  summary: 'Open an incident (severity SEV1..SEV4, default SEV3); writes its `created` timeline event',
  tags: ['incidents'],
  body: CreateIncidentBody,
  responses: { 201: Incident },
  errors: [400, 415],
  handler: async ({ deps, auth, body }) => reply(201, await createIncident(incidentDeps(deps), auth, body)),
});

export const getIncidentById = defineRoute({
  method: 'GET',
  path: '/api/v1/incidents/:id',
  auth: 'read',
  summary: 'One incident: status, severity, resources (graph nodes), war room, recurrence link, alert count',
  tags: ['incidents'],
  params: IncidentIdParams,
  responses: { 200: Incident },
  errors: [400],
  handler: ({ deps, auth, params }) => getIncident(deps.db, auth.tenant.id, params.id),
});

export const patchIncidentRoute = defineRoute({
  method: 'PATCH',
  path: '/api/v1/incidents/:id',
  auth: 'read_write',
  summary: 'Change status (open, investigating, mitigated, resolved), severity, title or description',
  description:
    'Each change writes a timeline event (status_changed, severity_changed, title_changed, description_changed). Unknown values are 400 and change nothing.',
  tags: ['incidents'],
  params: IncidentIdParams,
  body: PatchIncidentBody,
  responses: { 200: Incident },
  errors: [400, 415],
  handler: ({ deps, auth, params, body }) => patchIncident(incidentDeps(deps), auth, params.id, body),
});

export const getTimeline = defineRoute({
  method: 'GET',
  path: '/api/v1/incidents/:id/timeline',
  auth: 'read',
  summary: 'Timeline events, oldest first; after_id=n returns exactly the events with an id greater than n',
  description: 'Event ids are numeric and strictly increasing. limit 1..1000 (default 500).',
  tags: ['incidents'],
  params: IncidentIdParams,
  query: TimelineQuery,
  responses: { 200: Timeline },
  errors: [400],
  handler: async ({ deps, auth, params, query }) => ({
    incident_id: params.id,
    events: await listTimeline(deps.db, auth.tenant.id, params.id, query.after_id ?? 0, query.limit),
  }),
});

export const postTimelineNote = defineRoute({
  method: 'POST',
  path: '/api/v1/incidents/:id/timeline',
  auth: 'read_write',
  summary: 'Add a note to the timeline',
  tags: ['incidents'],
  params: IncidentIdParams,
  body: TimelineNoteBody,
  responses: { 201: TimelineEvent },
  errors: [400, 415],
  handler: async ({ deps, auth, params, body }) =>
    reply(201, await addTimelineNote(incidentDeps(deps), auth, params.id, body.body)),
});

const LastEventId = z.coerce.number().int().min(0);

export const getTimelineStream = defineRoute({
  method: 'GET',
  path: '/api/v1/incidents/:id/timeline/stream',
  auth: 'read',
  summary: 'The timeline live, as Server-Sent Events: id = event id, event = kind, data = the event',
  description:
    'Replays the events after after_id (or the Last-Event-ID header, which wins), then sends new ones as they are written, with no gap and no duplicate. Comment lines keep an idle stream alive. The stream stays open until the client leaves.',
  tags: ['incidents'],
  params: IncidentIdParams,
  query: TimelineStreamQuery,
  responses: { 200: { sse: true } },
  errors: [400],
  handler: async ({ ctx, deps, auth, params, query }) => {
    const header = ctx.get('last-event-id');
    const fromHeader = header ? LastEventId.safeParse(header) : undefined;
    if (fromHeader && !fromHeader.success) throw new AppError(400, 'Last-Event-ID must be an event id.');
    const afterId = fromHeader?.data ?? query.after_id ?? 0;
    await getIncident(deps.db, auth.tenant.id, params.id); // 404 before the stream opens
    await streamTimeline(
      ctx,
      deps.runs.timelineHub,
      params.id,
      afterId,
      (after) => listTimeline(deps.db, auth.tenant.id, params.id, after, 500),
      { keepaliveMs: deps.config.SSE_KEEPALIVE_MS, maxBufferedBytes: deps.config.SSE_MAX_BUFFERED_BYTES },
    );
  },
});

export const postInvestigate = defineRoute({
  method: 'POST',
  path: '/api/v1/incidents/:id/agent-investigate',
  auth: 'read_write',
  summary:
    'Start an agent investigation of the incident (a durable agent run); 202 with job, run and session ids',
  description:
    'Spends one unit of the daily agent budget (429 when spent). Stream the run with GET /api/v1/stream/attach?session_id=. The timeline gets investigation_started, then investigation_completed (the summary, citing ids) or investigation_failed.',
  tags: ['incidents'],
  params: IncidentIdParams,
  responses: { 202: InvestigationStarted },
  errors: [400, 429, 503],
  handler: async ({ deps, auth, params }) =>
    reply(
      202,
      await startInvestigation(
        { db: deps.db, redis: deps.redis, redisPrefix: deps.config.REDIS_PREFIX, ...deps.runs },
        auth,
        params.id,
      ),
    ),
});

export const postWarRoom = defineRoute({
  method: 'POST',
  path: '/api/v1/incidents/:id/war-room',
  auth: 'read_write',
  summary: "Open the incident's war room (201), or return it (200); tier team or higher (402 for free)",
  description:
    'The room is an agent session bound to the incident: its turns (POST /api/v1/ask with its session_id) see the incident, its alerts and its timeline. The caller joins its participants. One war_room_opened timeline event.',
  tags: ['incidents'],
  params: IncidentIdParams,
  responses: { 200: WarRoom, 201: WarRoom },
  errors: [400, 402],
  handler: async ({ deps, auth, params }) => {
    const { created, room } = await openWarRoom(incidentDeps(deps), auth, params.id);
    return reply(created ? 201 : 200, room);
  },
});

export const incidentRoutes = [
  getIncidents,
  postIncident,
  getIncidentById,
  patchIncidentRoute,
  getTimeline,
  postTimelineNote,
  getTimelineStream,
  postInvestigate,
  postWarRoom,
];
