import { CreateLearningBody, Learning, LearningList, LearningsQuery } from '@opsi/contracts';
import { createLearning, listLearnings } from '@opsi/core';
import { defineRoute, reply } from '../http/route';

export const getLearnings = defineRoute({
  method: 'GET',
  path: '/api/v1/learnings',
  auth: 'read',
  summary: 'Taught facts, newest first; status=active (default) or archived, service filters',
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
  description: 'Audit-logged. The fact is 1 to 2000 characters after trimming; service 1 to 128.',
  tags: ['knowledge'],
  body: CreateLearningBody,
  responses: { 201: Learning },
  errors: [400, 415],
  handler: async ({ deps, auth, body }) =>
    reply(201, await createLearning(deps.db, auth, { fact: body.fact, service: body.service })),
});

export const knowledgeRoutes = [getLearnings, postLearning];
