import { VersionResponse } from '@opsi/contracts';
import { MeResponse } from '@opsi/contracts';
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

export const serviceRoutes = [getVersion, getMe];
