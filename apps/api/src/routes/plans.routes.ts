import { z } from 'zod';
import { JobAccepted, ResolutionPlan, SkipStepBody } from '@opsi/contracts';
import {
  confirmStep,
  getOrCreatePlan,
  getPlan,
  regeneratePlan,
  requestFinalize,
  requestVerify,
  skipStep,
} from '@opsi/core';
import { defineRoute, reply } from '../http/route';
import type { ApiDeps } from '../deps';

const Id = z.object({ id: z.uuid() });
const StepParams = z.object({ id: z.uuid(), seq: z.coerce.number().int().min(1).max(8) });
const settings = (deps: ApiDeps) => ({ generationTimeoutMs: deps.config.PLAN_GENERATION_TIMEOUT_MS });

export const postResolutionPlan = defineRoute({
  method: 'POST',
  path: '/api/pulse/findings/:id/resolution-plan',
  auth: 'session_or_read_write',
  summary: 'Get-or-create the resolution plan of the finding’s duplicate cluster',
  description:
    'One plan per cluster, the same to every caller (a confirmed duplicate gets its group’s plan). 202 with job_id when this call started generation (a new plan, a failed one retried, or a resolved cluster that regressed); 200 when the plan existed. 409 when the finding is resolved or dismissed and has no plan.',
  tags: ['resolution wizard'],
  params: Id,
  responses: { 200: ResolutionPlan, 202: ResolutionPlan },
  errors: [409],
  handler: async ({ deps, auth, params }) => {
    const r = await getOrCreatePlan(deps.db, deps.runs.producer, auth, params.id, settings(deps));
    return r.created ? reply(202, r.plan) : r.plan;
  },
});

export const getResolutionPlan = defineRoute({
  method: 'GET',
  path: '/api/pulse/plans/:id',
  auth: 'session_or_read_write',
  summary: 'Plan status, steps and verification state; stale when the finding’s evidence changed',
  tags: ['resolution wizard'],
  params: Id,
  responses: { 200: ResolutionPlan },
  handler: ({ deps, auth, params }) => getPlan(deps.db, auth.tenant.id, params.id, settings(deps)),
});

export const postVerifyStep = defineRoute({
  method: 'POST',
  path: '/api/pulse/plans/:id/steps/:seq/verify',
  auth: 'session_or_read_write',
  summary:
    'Run the step’s read-only check through the connection (a job: 202; the step shows verifying, then its result)',
  description:
    '409 when the plan is not ready, the step is the final check, has no automatic check, or is already verified or confirmed.',
  tags: ['resolution wizard'],
  params: StepParams,
  responses: { 202: JobAccepted },
  errors: [409],
  handler: async ({ deps, auth, params }) =>
    reply(202, await requestVerify(deps.db, deps.runs.producer, auth, params.id, params.seq)),
});

export const postConfirmStep = defineRoute({
  method: 'POST',
  path: '/api/pulse/plans/:id/steps/:seq/confirm',
  auth: 'session_or_read_write',
  summary: 'Mark a step done by hand (audit-logged); the final step is run by finalize (409)',
  tags: ['resolution wizard'],
  params: StepParams,
  responses: { 200: ResolutionPlan },
  errors: [409],
  handler: ({ deps, auth, params }) => confirmStep(deps.db, auth, params.id, params.seq),
});

export const postSkipStep = defineRoute({
  method: 'POST',
  path: '/api/pulse/plans/:id/steps/:seq/skip',
  auth: 'session_or_read_write',
  summary:
    'Skip a step with a reason (3..500 characters; audit-logged); the final step cannot be skipped (409)',
  tags: ['resolution wizard'],
  params: StepParams,
  body: SkipStepBody,
  responses: { 200: ResolutionPlan },
  errors: [400, 409, 415],
  handler: ({ deps, auth, params, body }) => skipStep(deps.db, auth, params.id, params.seq, body.reason),
});

export const postFinalize = defineRoute({
  method: 'POST',
  path: '/api/pulse/plans/:id/finalize',
  auth: 'session_or_read_write',
  summary: 'Run the final check: re-sync the cluster’s resources and re-run the detection (a job: 202)',
  description:
    'The plan then shows final_check {outcome: resolved | still_present, summary, at}. 409 before every other step is verified, confirmed or skipped, or when the plan is not ready.',
  tags: ['resolution wizard'],
  params: Id,
  responses: { 202: JobAccepted },
  errors: [409],
  handler: async ({ deps, auth, params }) =>
    reply(202, await requestFinalize(deps.db, deps.runs.producer, auth, params.id)),
});

export const postRegenerate = defineRoute({
  method: 'POST',
  path: '/api/pulse/plans/:id/regenerate',
  auth: 'session_or_read_write',
  summary: 'Generate the plan again from the current evidence (after failed, stale or still_present): 202',
  tags: ['resolution wizard'],
  params: Id,
  responses: { 202: JobAccepted },
  errors: [409],
  handler: async ({ deps, auth, params }) =>
    reply(202, await regeneratePlan(deps.db, deps.runs.producer, auth, params.id)),
});

export const planRoutes = [
  postResolutionPlan,
  getResolutionPlan,
  postVerifyStep,
  postConfirmStep,
  postSkipStep,
  postFinalize,
  postRegenerate,
];
