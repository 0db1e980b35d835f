import { z } from 'zod';
import {
  CatalogToolList,
  CreateLearningBody,
  CreateRunbookBody,
  InstallToolBody,
  JobAccepted,
  Learning,
  LearningList,
  LearningsQuery,
  LimitQuery,
  MorningReport,
  MorningReportList,
  PatchLearningBody,
  Runbook,
  RunbookList,
  RunbooksQuery,
  TenantTool,
  TenantToolList,
  ToolIdParams,
} from '@opsi/contracts';
import {
  createLearning,
  createRunbook,
  installTool,
  outboundPolicyFor,
  latestMorningReport,
  listCatalogFor,
  listLearnings,
  listMorningReports,
  listRunbooks,
  listTenantTools,
  removeTool,
  requestMorningReport,
  requireToolManager,
  runbooksForFinding,
  secretBoxFor,
  setLearningStatus,
} from '@opsi/core';
import { defineRoute, reply } from '../http/route';

export const getLearnings = defineRoute({
  method: 'GET',
  path: '/api/v1/learnings',
  auth: 'read',
  summary: 'Taught facts, newest first; status=active (default) or archived, service filters',
  description:
    'Each learning carries its provenance (source user, agent or plan; created_by) and its use by the agent (used_count, last_used_at: counted when an answer cites it).',
  tags: ['knowledge'],
  query: LearningsQuery,
  responses: { 200: LearningList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    learnings: await listLearnings(deps.db, auth.tenant.id, { status: query.status, service: query.service }),
  }),
});

export const postLearning = defineRoute({
  method: 'POST',
  path: '/api/v1/learnings',
  auth: 'read_write',
  summary: 'Teach a fact, optionally about one service; the agent reads active learnings on every turn',
  description:
    'Audit-logged. The fact is 1 to 2000 characters after trimming; service 1 to 128. Source: user.',
  tags: ['knowledge'],
  body: CreateLearningBody,
  responses: { 201: Learning },
  errors: [400, 415],
  handler: async ({ deps, auth, body }) =>
    reply(201, await createLearning(deps.db, auth, { fact: body.fact, service: body.service })),
});

export const patchLearning = defineRoute({
  method: 'PATCH',
  path: '/api/v1/learnings/:id',
  auth: 'read_write',
  summary: 'Archive a learning (status archived), or make it active again',
  description: 'An archived learning no longer rides with agent turns. Audit-logged.',
  tags: ['knowledge'],
  params: z.object({ id: z.string().min(1).max(200) }),
  body: PatchLearningBody,
  responses: { 200: Learning },
  errors: [400, 415],
  handler: ({ deps, auth, params, body }) => setLearningStatus(deps.db, auth, params.id, body.status),
});

export const getLatestReport = defineRoute({
  method: 'GET',
  path: '/api/v1/reports/morning/latest',
  auth: 'read',
  summary: 'The latest morning report: what changed since the previous one, and what to fix first',
  description: '404 {detail} before the first report.',
  tags: ['knowledge'],
  responses: { 200: MorningReport },
  handler: ({ deps, auth }) => latestMorningReport(deps.db, auth.tenant.id),
});

export const getReports = defineRoute({
  method: 'GET',
  path: '/api/v1/reports/morning',
  auth: 'read',
  summary: 'Morning reports, newest first',
  tags: ['knowledge'],
  query: LimitQuery,
  responses: { 200: MorningReportList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    reports: await listMorningReports(deps.db, auth.tenant.id, query.limit),
  }),
});

export const postReport = defineRoute({
  method: 'POST',
  path: '/api/v1/reports/morning',
  auth: 'read_write',
  summary: 'Write a morning report now, covering the time since the previous one (a job: 202)',
  description:
    'While one is queued or running for the tenant, asking again answers the same job. The report then shows on /reports/morning/latest and is delivered to the installed notifiers.',
  tags: ['knowledge'],
  responses: { 202: JobAccepted },
  handler: async ({ deps, auth }) =>
    reply(202, await requestMorningReport(deps.runs.producer, auth.tenant.id, `user:${auth.user.email}`)),
});

export const getCatalog = defineRoute({
  method: 'GET',
  path: '/api/v1/marketplace/tools',
  auth: 'read',
  summary: 'The integrations catalog: connectors, alert sources, notifiers and agent tools',
  tags: ['tools'],
  responses: { 200: CatalogToolList },
  handler: async ({ deps, auth }) => ({ tools: await listCatalogFor(deps.db, auth.tenant.id) }),
});

export const getTenantTools = defineRoute({
  method: 'GET',
  path: '/api/v1/marketplace/tenant/tools',
  auth: 'read',
  summary: 'What the tenant has: its connection, installed integrations (with status), built-in agent tools',
  description:
    'settings never holds a secret: a notifier shows its URL’s host only. The terraform_state connector’s settings.states lists each connected state: source (a file path or s3://bucket/key), kind, region, format, serial, lineage, last_read_at, last_error, managed, resources, tainted, skipped_unsupported (managed resources of types the inventory does not model, by type) and skipped_other (by reason).',
  tags: ['tools'],
  responses: { 200: TenantToolList },
  handler: async ({ deps, auth }) => ({ tools: await listTenantTools(deps.db, auth.tenant.id) }),
});

export const postTenantTool = defineRoute({
  method: 'POST',
  path: '/api/v1/marketplace/tenant/tools',
  auth: 'read_write',
  summary: 'Install (201) or reconfigure (200) an integration; owner or admin only',
  description:
    'Notifiers: webhook needs settings.url and settings.secret (16+ characters; it signs deliveries), slack needs settings.url (an incoming webhook); settings.events picks from report.morning, finding.critical, incident.opened (default all). URL and secret are stored encrypted and never returned. Connectors (409) are connected with the operator command env connect; agent tools (409) are built in. Audit-logged.',
  tags: ['tools'],
  body: InstallToolBody,
  responses: { 200: TenantTool, 201: TenantTool },
  errors: [400, 409, 415],
  handler: async ({ deps, auth, body }) => {
    const actor = requireToolManager(auth);
    const { tool, created } = await installTool(
      deps.db,
      secretBoxFor(deps.config),
      auth.tenant.id,
      actor,
      {
        tool_id: body.tool_id,
        url: body.settings?.url,
        secret: body.settings?.secret,
        events: body.settings?.events,
      },
      outboundPolicyFor(deps.config),
    );
    return reply(created ? 201 : 200, tool);
  },
});

export const deleteTenantTool = defineRoute({
  method: 'DELETE',
  path: '/api/v1/marketplace/tenant/tools/:id',
  auth: 'read_write',
  summary: 'Remove an installed integration (204); owner or admin only',
  tags: ['tools'],
  params: ToolIdParams,
  responses: { 204: null },
  errors: [409],
  handler: async ({ deps, auth, params }) => {
    const actor = requireToolManager(auth);
    await removeTool(deps.db, auth.tenant.id, actor, params.id);
    return reply(204);
  },
});

export const getRunbooks = defineRoute({
  method: 'GET',
  path: '/api/v1/runbooks',
  auth: 'read',
  summary: 'Runbooks: the tenant’s own and the built-in ones per detector family',
  description:
    'service= keeps the runbooks for that service and those for every service; finding_id= returns the runbooks that apply to that finding, best first; source= built_in or tenant.',
  tags: ['knowledge'],
  query: RunbooksQuery,
  responses: { 200: RunbookList },
  errors: [400],
  handler: async ({ deps, auth, query }) => {
    let runbooks = query.finding_id
      ? await runbooksForFinding(deps.db, auth.tenant.id, query.finding_id)
      : await listRunbooks(deps.db, auth.tenant.id, { service: query.service });
    if (query.finding_id && query.service)
      runbooks = runbooks.filter(
        (r) => !r.service || r.service.toLowerCase() === query.service!.toLowerCase(),
      );
    if (query.source) runbooks = runbooks.filter((r) => r.source === query.source);
    return { runbooks };
  },
});

export const postRunbook = defineRoute({
  method: 'POST',
  path: '/api/v1/runbooks',
  auth: 'read_write',
  summary: 'Write a tenant runbook',
  description:
    'applies_to names the detectors (check ids), resource types and alert fingerprints it is for; a runbook with a service applies only to that service. Audit-logged.',
  tags: ['knowledge'],
  body: CreateRunbookBody,
  responses: { 201: Runbook },
  errors: [400, 415],
  handler: async ({ deps, auth, body }) => reply(201, await createRunbook(deps.db, auth, body)),
});

export const knowledgeRoutes = [
  getLearnings,
  postLearning,
  patchLearning,
  getLatestReport,
  getReports,
  postReport,
  getCatalog,
  getTenantTools,
  postTenantTool,
  deleteTenantTool,
  getRunbooks,
  postRunbook,
];
