import { z } from 'zod';
import { CreateTokenBody, TokenCreated, TokenList } from '@opsi/contracts';
import { listTokens, mintToken, revokeToken } from '@opsi/core';
import { defineRoute, reply } from '../http/route';

const TokenIdParams = z.object({ id: z.uuid() });

export const createToken = defineRoute({
  method: 'POST',
  path: '/api/v1/tokens',
  auth: 'session',
  summary: 'Mint a token (browser session only; the secret is shown once)',
  description:
    'Only from a browser session with its X-CSRF-Token header: a bearer token gets 403, because a token never mints a token.',
  tags: ['tokens'],
  body: CreateTokenBody,
  responses: { 201: TokenCreated },
  errors: [400, 415],
  handler: async ({ deps, auth, body }) =>
    reply(
      201,
      await mintToken(deps.db, auth, {
        name: body.name,
        scope: body.scope,
        expiresInDays: body.expires_in_days,
      }),
      { 'Cache-Control': 'no-store' },
    ),
});

export const getTokens = defineRoute({
  method: 'GET',
  path: '/api/v1/tokens',
  auth: 'read',
  summary: "Metadata of the caller's tokens (never the secret)",
  tags: ['tokens'],
  responses: { 200: TokenList },
  handler: async ({ deps, auth }) => ({ tokens: await listTokens(deps.db, auth) }),
});

export const deleteToken = defineRoute({
  method: 'DELETE',
  path: '/api/v1/tokens/:id',
  auth: 'read_write',
  summary: 'Revoke a token; a token may revoke itself',
  tags: ['tokens'],
  params: TokenIdParams,
  responses: { 204: null },
  handler: async ({ deps, auth, params }) => {
    await revokeToken(deps.db, auth, params.id);
    return reply(204);
  },
});

export const tokenRoutes = [createToken, getTokens, deleteToken];
