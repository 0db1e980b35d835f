import { VersionResponse } from '@opsi/contracts';
import { MeResponse, ToolsResponse } from '@opsi/contracts';
import { availableTools } from '@opsi/core';
import { defineRoute } from '../http/route';
import { tenantView, userView } from './views';

export const getVersion = defineRoute({
  method: 'GET',
  path: '/api/v1/version',
  auth: 'none',
  summary: 'Service name, API version and revision; no authentication',
  tags: ['service'],
  responses: { 200: VersionResponse },
  handler: ({ deps }) => ({ service: 'opsi', api_version: 'v1', revision: deps.revision }),
});

export const getMe = defineRoute({
  method: 'GET',
  path: '/api/v1/me',
  auth: 'read',
  summary: 'Identity and tenant of the presented token',
  tags: ['service'],
  responses: { 200: MeResponse },
  handler: ({ auth }) => {
    if (auth.kind !== 'token') throw new Error('unreachable: read routes take tokens');
    return {
      user: userView(auth),
      tenant: tenantView(auth),
      token: { id: auth.token.id, scope: auth.token.scope, expires_at: auth.token.expires_at },
    };
  },
});

export const getTools = defineRoute({
  method: 'GET',
  path: '/api/v1/tools/available',
  auth: 'read',
  summary: 'Agent tools available to the tenant: name, description and input schema',
  tags: ['agent'],
  responses: { 200: ToolsResponse },
  handler: ({ auth }) => ({ tools: availableTools(auth.tenant) }),
});

export const serviceRoutes = [getVersion, getMe, getTools];
