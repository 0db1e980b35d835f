import { z } from 'zod';

export const PlanReviewBody = z
  .object({
    plan: z
      .string({
        error: (iss) =>
          iss.input === undefined
            ? 'missing: post the output of `terraform plan` or `terraform show -json <planfile>` as a string'
            : 'must be a string (the plan output as text)',
      })
      .describe(
        '`terraform plan` text output (CI log noise and colours are fine) or `terraform show -json <planfile>` output',
      ),
  })
  .meta({ id: 'PlanReviewBody' });

export const PlanRisk = z.enum(['low', 'medium', 'high', 'critical']);

export const PlanCitation = z.object({
  kind: z.enum(['plan_line', 'resource', 'finding']),
  ref: z
    .string()
    .describe('plan_line: `L12-L30` in the posted text, or a JSON pointer; resource: ARN; finding: id'),
});

export const PlanAnnotation = z
  .object({
    risk: PlanRisk,
    category: z.enum([
      'destructive',
      'security',
      'iam',
      'reliability',
      'cost',
      'drift',
      'fixes',
      'unmatched',
    ]),
    address: z.string(),
    title: z.string(),
    detail: z.string(),
    citations: z.array(PlanCitation),
  })
  .meta({ id: 'PlanAnnotation' });

const PlanAction = z.enum(['create', 'update', 'delete', 'replace', 'read', 'no-op', 'forget']);

export const PlanReviewedResource = z.object({
  address: z.string(),
  action: PlanAction,
  replace_order: z.enum(['delete_first', 'create_first']).nullable(),
  reason: z.string().nullable(),
  replace_paths: z.array(z.string()),
  moved_from: z.string().nullable(),
  importing: z.string().nullable(),
  plan_ref: z.string(),
  live: z
    .object({
      id: z.string(),
      arn: z.string(),
      type: z.string(),
      native_id: z.string(),
      name: z.string().nullable(),
      matched_by: z.enum(['terraform_address', 'arn', 'native_id', 'name', 'name_tag']),
    })
    .nullable(),
  protection: z
    .object({
      deletion_protection: z.boolean().nullable(),
      multi_az: z.boolean().nullable(),
      backup_retention_days: z.number().nullable(),
      latest_snapshot_at: z.string().nullable(),
    })
    .nullable(),
  dependents: z
    .object({
      total: z.number().int(),
      by_depth: z.record(z.string(), z.number().int()),
      items: z.array(
        z.object({
          id: z.string().nullable(),
          arn: z.string(),
          type: z.string().nullable(),
          native_id: z.string().nullable(),
          name: z.string().nullable(),
          depth: z.number().int(),
          via: z.string(),
          impact: z.enum(['fails', 'degraded']),
        }),
      ),
    })
    .nullable(),
  monthly_cost_before: z.number().nullable(),
  monthly_cost_after: z.number().nullable(),
});

const Counts = {
  add: z.number().int(),
  change: z.number().int(),
  destroy: z.number().int(),
};

export const PlanReviewResult = z
  .object({
    overall_risk: PlanRisk,
    read_only: z.literal(true),
    plan_digest: z.string(),
    format: z.enum(['text', 'legacy_text', 'json']),
    terraform_version: z.string().nullable(),
    summary: z.object({
      ...Counts,
      replace: z.number().int(),
      read: z.number().int(),
      import: z.number().int(),
      move: z.number().int(),
      forget: z.number().int(),
      drift: z.number().int(),
      terraform_summary: z.object({ ...Counts, import: z.number().int() }).nullable(),
    }),
    cost: z.object({
      monthly_delta: z.number(),
      currency: z.literal('USD'),
      priced: z.number().int(),
      unpriced: z.array(z.string()),
    }),
    findings: z.object({
      fixes: z.array(
        z.object({
          finding_id: z.string(),
          check_id: z.string(),
          title: z.string(),
          severity: z.string(),
          address: z.string(),
          arn: z.string(),
          how: z.enum(['changed', 'removed']),
        }),
      ),
      introduces: z.array(
        z.object({
          check_id: z.string(),
          title: z.string(),
          severity: z.string(),
          address: z.string(),
          arn: z.string().nullable(),
        }),
      ),
    }),
    resources: z.array(PlanReviewedResource),
    annotations: z.array(PlanAnnotation),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'PlanReviewResult' });
