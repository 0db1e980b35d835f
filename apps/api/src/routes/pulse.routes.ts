import { z } from 'zod';
import {
  AuditTrail,
  FindingDetail,
  FindingList,
  FindingStatusBody,
  FindingsQuery,
  JobAccepted,
  NotificationList,
  NotificationsQuery,
  PulseOverview,
  ReadAllResponse,
  RecommendationList,
  ResolvedList,
  ResolvedQuery,
  StepRerun,
  SuccessResponse,
} from '@opsi/contracts';
import {
  findingOfRecommendation,
  getAuditTrail,
  getFinding,
  listFindings,
  listNotifications,
  listRecommendations,
  listResolved,
  markAllNotificationsRead,
  pulseOverview,
  requestReinvestigation,
  rerunAuditStep,
  setFindingStatus,
} from '@opsi/core';
import { defineRoute, reply } from '../http/route';

const Id = z.object({ id: z.uuid() });
const StepParams = z.object({ id: z.uuid(), seq: z.coerce.number().int().min(1).max(100_000) });

export const getOverview = defineRoute({
  method: 'GET',
  path: '/api/v1/pulse/overview',
  auth: 'read',
  summary: 'Tenant summary: open findings, estimated savings (each resource once), coverage',
  tags: ['pulse'],
  responses: { 200: PulseOverview },
  handler: ({ deps, auth }) => pulseOverview(deps.db, auth.tenant.id),
});

export const getFindings = defineRoute({
  method: 'GET',
  path: '/api/v1/pulse/findings',
  auth: 'read',
  summary: 'Findings; clustered duplicates (confirmed) only when asked for with status=confirmed',
  tags: ['pulse'],
  query: FindingsQuery,
  responses: { 200: FindingList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    findings: await listFindings(deps.db, auth.tenant.id, {
      status: query.status,
      severity: query.severity,
      domain: query.domain,
      sortBy: query.sort_by,
      sortDir: query.sort_dir,
    }),
  }),
});

const findingDetail = (path: string, auth: 'read' | 'session_or_read_write', summary: string) =>
  defineRoute({
    method: 'GET',
    path,
    auth,
    summary,
    tags: ['pulse'],
    params: Id,
    responses: { 200: FindingDetail },
    handler: ({ deps, auth: a, params }) => getFinding(deps.db, a.tenant.id, params.id),
  });

export const patchFindingStatus = defineRoute({
  method: 'PATCH',
  path: '/api/v1/pulse/findings/:id/status',
  auth: 'read_write',
  summary: 'Set a finding’s lifecycle status (open, acknowledged, in_progress, resolved, dismissed)',
  description:
    'Any lifecycle status from any status; confirmed is set only by clustering (400). Audit-logged.',
  tags: ['pulse'],
  params: Id,
  body: FindingStatusBody,
  responses: { 200: SuccessResponse },
  errors: [400, 415],
  handler: ({ deps, auth, params, body }) => setFindingStatus(deps.db, auth, params.id, body.status),
});

export const getRecommendations = defineRoute({
  method: 'GET',
  path: '/api/v1/pulse/recommendations',
  auth: 'read',
  summary: 'Recommendations of active findings with savings and effort, most urgent first',
  tags: ['pulse'],
  responses: { 200: RecommendationList },
  handler: async ({ deps, auth }) => ({
    recommendations: await listRecommendations(deps.db, auth.tenant.id),
  }),
});

export const getResolved = defineRoute({
  method: 'GET',
  path: '/api/v1/pulse/resolved',
  auth: 'read',
  summary: 'Resolved clusters with resolver attribution and evidence',
  tags: ['pulse'],
  query: ResolvedQuery,
  responses: { 200: ResolvedList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    resolved: await listResolved(deps.db, auth.tenant.id, query.domain),
  }),
});

const reinvestigateFinding = (path: string, auth: 'read_write' | 'session_or_read_write') =>
  defineRoute({
    method: 'POST',
    path,
    auth,
    summary: 'Re-check a finding’s current state (a job: 202, the finding shows the result)',
    tags: ['pulse'],
    params: Id,
    responses: { 202: JobAccepted },
    handler: async ({ deps, auth: a, params }) =>
      reply(202, await requestReinvestigation(deps.db, deps.runs.producer, a.tenant.id, params.id)),
  });

export const getAudit = defineRoute({
  method: 'GET',
  path: '/api/pulse/findings/:id/audit',
  auth: 'session_or_read_write',
  summary: 'A finding’s audit steps in order, with total queries, failures and self-corrections',
  tags: ['pulse evidence'],
  params: Id,
  responses: { 200: AuditTrail },
  handler: ({ deps, auth, params }) => getAuditTrail(deps.db, auth.tenant.id, params.id),
});

export const postRerunStep = defineRoute({
  method: 'POST',
  path: '/api/pulse/findings/:id/audit/:seq/run',
  auth: 'session_or_read_write',
  summary:
    'Re-run one recorded query live: read-only, tenant-scoped, byte-capped; 409 for a step that is not rerunnable',
  tags: ['pulse evidence'],
  params: StepParams,
  responses: { 200: StepRerun },
  errors: [400, 409],
  handler: ({ deps, auth, params }) => rerunAuditStep(deps.db, auth.tenant.id, params.id, params.seq),
});

export const postReinvestigateRecommendation = defineRoute({
  method: 'POST',
  path: '/api/pulse/recommendations/:id/reinvestigate',
  auth: 'session_or_read_write',
  summary: 'Re-check the finding a recommendation belongs to',
  tags: ['pulse evidence'],
  params: Id,
  responses: { 202: JobAccepted },
  handler: async ({ deps, auth, params }) => {
    const findingId = await findingOfRecommendation(deps.db, auth.tenant.id, params.id);
    return reply(202, await requestReinvestigation(deps.db, deps.runs.producer, auth.tenant.id, findingId));
  },
});

export const getNotifications = defineRoute({
  method: 'GET',
  path: '/api/v1/notifications',
  auth: 'read',
  summary: 'Notifications, newest first; unread=true|false filters',
  tags: ['notifications'],
  query: NotificationsQuery,
  responses: { 200: NotificationList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    notifications: (
      await listNotifications(deps.db, auth.tenant.id, { unread: query.unread, limit: query.limit })
    ).map(({ read_at, ...n }) => ({ ...n, read: read_at !== null })),
  }),
});

export const postReadAll = defineRoute({
  method: 'POST',
  path: '/api/v1/notifications/read-all',
  auth: 'read_write',
  summary: 'Mark every notification read',
  tags: ['notifications'],
  responses: { 200: ReadAllResponse },
  handler: ({ deps, auth }) => markAllNotificationsRead(deps.db, auth.tenant.id),
});

export const pulseRoutes = [
  getOverview,
  getFindings,
  findingDetail(
    '/api/v1/pulse/findings/:id',
    'read',
    'One finding with resources, recommendation, group history and audit trail',
  ),
  patchFindingStatus,
  getRecommendations,
  getResolved,
  reinvestigateFinding('/api/v1/pulse/findings/:id/reinvestigate', 'read_write'),
  findingDetail(
    '/api/pulse/findings/:id',
    'session_or_read_write',
    'Full detail: reasoning, resources with links, recommendation, group history',
  ),
  getAudit,
  postRerunStep,
  reinvestigateFinding('/api/pulse/findings/:id/reinvestigate', 'session_or_read_write'),
  postReinvestigateRecommendation,
  getNotifications,
  postReadAll,
];
