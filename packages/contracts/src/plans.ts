import { z } from 'zod';

const Citation = z.object({
  kind: z.enum(['finding', 'evidence', 'resource', 'learning', 'runbook']),
  ref: z.string(),
});

export const PlanStep = z
  .object({
    seq: z.number().int().min(1).max(8),
    title: z.string(),
    instructions: z.string(),
    citations: z.array(Citation),
    fix_command: z.object({ command: z.string(), executed_by_service: z.literal(false) }).nullable(),
    verification: z.object({ command: z.string(), done_when: z.string() }).nullable(),
    how_to_confirm: z.string().nullable(),
    status: z.enum(['pending', 'verifying', 'verified', 'confirmed', 'skipped', 'failed_check']),
    final: z.boolean(),
    last_check: z
      .object({
        at: z.string(),
        outcome: z.enum(['passed', 'not_yet', 'not_done', 'error']),
        output_preview: z.string(),
      })
      .nullable(),
    skip_reason: z.string().nullable(),
    done_by: z.string().nullable(),
    done_at: z.string().nullable(),
  })
  .meta({ id: 'PlanStep' });

export const ResolutionPlan = z
  .object({
    id: z.string(),
    finding_id: z.string(),
    group_id: z.string(),
    status: z.enum(['generating', 'ready', 'failed', 'finalizing', 'resolved']),
    stale: z.boolean(),
    engine: z.string(),
    attempt: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    resolved_at: z.string().nullable(),
    error: z.string().nullable(),
    steps: z.array(PlanStep).max(8),
    final_check: z
      .object({ outcome: z.enum(['resolved', 'still_present']), summary: z.string(), at: z.string() })
      .nullable(),
    job_id: z.string().optional(),
  })
  .meta({ id: 'ResolutionPlan' });

export const SkipStepBody = z
  .object({ reason: z.string().optional() })
  .meta({ id: 'SkipStepBody', description: 'reason: 3..500 characters after trimming (required)' });
