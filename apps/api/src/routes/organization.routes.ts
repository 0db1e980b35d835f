import { AuditList, AuditQuery, AuditVerifyResponse, TeamResponse } from '@opsi/contracts';
import { listAudit, listTeamMembers, verifyAuditChain } from '@opsi/core';
import { defineRoute } from '../http/route';

export const getTeam = defineRoute({
  method: 'GET',
  path: '/api/v1/team',
  auth: 'read',
  summary: 'Members of the tenant with their roles',
  tags: ['organization'],
  responses: { 200: TeamResponse },
  handler: async ({ deps, auth }) => ({ members: await listTeamMembers(deps.db, auth.tenant.id) }),
});

export const getAudit = defineRoute({
  method: 'GET',
  path: '/api/v1/audit',
  auth: 'read',
  summary: "The tenant's audit log, newest first",
  tags: ['organization'],
  query: AuditQuery,
  responses: { 200: AuditList },
  errors: [400],
  handler: async ({ deps, auth, query }) => ({
    entries: await listAudit(deps.db, auth.tenant.id, query.limit),
  }),
});

export const getAuditVerify = defineRoute({
  method: 'GET',
  path: '/api/v1/audit/verify',
  auth: 'read',
  summary: "Recomputes the audit log's hash chain",
  tags: ['organization'],
  responses: { 200: AuditVerifyResponse },
  handler: ({ deps, auth }) => verifyAuditChain(deps.db, auth.tenant.id),
});

export const organizationRoutes = [getTeam, getAudit, getAuditVerify];
