import { z } from 'zod';
import {
  CreateSessionBody,
  HistoryQuery,
  HistoryResponse,
  RenameSessionBody,
  SessionId,
  SessionList,
  SessionView,
} from '@opsi/contracts';
import { createSession, deleteSession, getHistory, listSessions, renameSession } from '@opsi/core';
import { defineRoute, reply } from '../http/route';

const SessionParams = z.object({ id: SessionId });

export const getSessions = defineRoute({
  method: 'GET',
  path: '/api/v1/sessions',
  auth: 'read',
  summary: "The tenant's agent sessions, most recently active first",
  tags: ['sessions'],
  responses: { 200: SessionList },
  handler: async ({ deps, auth }) => ({ sessions: await listSessions(deps.db, auth.tenant.id) }),
});

export const postSession = defineRoute({
  method: 'POST',
  path: '/api/v1/sessions',
  auth: 'read_write',
  summary: 'Create a named session',
  tags: ['sessions'],
  body: CreateSessionBody,
  responses: { 201: SessionView.pick({ id: true, name: true, created_at: true }) },
  errors: [400, 415],
  handler: async ({ deps, auth, body }) => {
    const session = await createSession(deps.db, auth, body.name);
    return reply(201, { id: session.id, name: session.name, created_at: session.created_at });
  },
});

export const patchSession = defineRoute({
  method: 'PATCH',
  path: '/api/v1/sessions/:id',
  auth: 'read_write',
  summary: 'Rename a session',
  tags: ['sessions'],
  params: SessionParams,
  body: RenameSessionBody,
  responses: { 200: SessionView },
  errors: [400, 415],
  handler: ({ deps, auth, params, body }) => renameSession(deps.db, auth.tenant.id, params.id, body.name),
});

export const deleteSessionRoute = defineRoute({
  method: 'DELETE',
  path: '/api/v1/sessions/:id',
  auth: 'read_write',
  summary: 'Delete a session and its messages; a running run is cancelled',
  tags: ['sessions'],
  params: SessionParams,
  responses: { 204: null },
  handler: async ({ deps, auth, params }) => {
    await deleteSession(
      {
        db: deps.db,
        redis: deps.redis,
        redisPrefix: deps.config.REDIS_PREFIX,
        log: deps.runs.log,
        producer: deps.runs.producer,
      },
      auth.tenant.id,
      params.id,
    );
    return reply(204);
  },
});

export const getHistoryRoute = defineRoute({
  method: 'GET',
  path: '/api/v1/history',
  auth: 'read',
  summary: "A session's messages, oldest first",
  tags: ['sessions'],
  query: HistoryQuery,
  responses: { 200: HistoryResponse },
  errors: [400, 404],
  handler: ({ deps, auth, query }) => getHistory(deps.db, auth.tenant.id, query.session_id),
});

export const sessionRoutes = [getSessions, postSession, patchSession, deleteSessionRoute, getHistoryRoute];
