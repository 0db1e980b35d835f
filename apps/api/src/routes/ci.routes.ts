import { PlanReviewBody, PlanReviewResult } from '@opsi/contracts';
import { reviewPlan } from '@opsi/core';
import { defineRoute } from '../http/route';

export const postPlanReview = defineRoute({
  method: 'POST',
  path: '/api/v1/plan-review',
  auth: 'read_write',
  summary: 'Review a Terraform plan against the live environment',
  description:
    'Body `{plan}`: `terraform plan` text (colours, CI log lines and the drift section are fine) or `terraform show -json <planfile>`. ' +
    'Answers the overall risk and risk-ranked annotations, each citing plan lines, live resources and findings, plus a summary, the monthly cost delta at list prices, ' +
    'and the open findings the plan fixes and the ones it would introduce. Read-only: nothing is stored but an audit entry (plan digest, overall risk). ' +
    'The plan may be UTF-16 or UTF-8 with a byte-order mark, and wrapped in CI framing (hashicorp/setup-terraform, Atlantis, a shell prompt); a JSON plan trimmed to `resource_changes` is reviewed. ' +
    'Missing, empty or non-Terraform plan, or one past a cap (262,144 characters per text line, 64 levels of nesting): 400. Free tier: 403. ' +
    'Body above PLAN_REVIEW_BODY_LIMIT_BYTES (10 MiB by default), or a parse that needs more than PLAN_PARSE_MEMORY_MB: 413. A parse that takes longer than PLAN_PARSE_TIMEOUT_MS: 422.',
  tags: ['ci'],
  body: PlanReviewBody,
  bodyLimit: (config) => config.PLAN_REVIEW_BODY_LIMIT_BYTES,
  // A plan is never stored, and UTF-16 read as bytes has a NUL after each character (parse.ts recovers it).
  bodyMayHoldNul: true,
  responses: { 200: PlanReviewResult },
  errors: [400, 413, 415, 422],
  handler: ({ deps, auth, body }) =>
    reviewPlan(deps.db, auth, body.plan, {
      timeoutMs: deps.config.PLAN_PARSE_TIMEOUT_MS,
      memoryMb: deps.config.PLAN_PARSE_MEMORY_MB,
    }),
});

export const ciRoutes = [postPlanReview];
