import { createHash, randomUUID } from 'node:crypto';
import type { Db, PlanStepStatus } from '@opsi/db';
import { isUnresolvedFindingStatus } from '@opsi/contracts';
import type { JobProducer } from '@opsi/jobs';
import { appendSteps, type AuditStep } from '@opsi/detectors';
import { appendAudit } from '../audit';
import type { Auth } from '../context';
import { BadRequest, Conflict, NotFound } from '../errors';
import {
  findEvidenceParts,
  findFindingForPlan,
  findPlan,
  findPlanOfGroup,
  findPlanOfGroupOrThrow,
  findPlanStep,
  findPlanSteps,
  findPrimaryFinding,
  findStepStatuses,
  insertPlanIfAbsent,
  markGenerationTimedOut,
  markPlanFinalizing,
  markPlanRegenerating,
  markStepConfirmed,
  markStepSkipped,
  markStepVerifying,
  sumRealizedSavings,
  touchPlan,
  unmarkStepVerifying,
} from './repository';

/** Plan statuses that are still being worked on (stale can only be flagged on these). */
const OPEN_PLAN = ['generating', 'ready', 'failed', 'finalizing'] as const;
const DONE_STEP: PlanStepStatus[] = ['verified', 'confirmed', 'skipped'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PlanSettings {
  generationTimeoutMs: number;
}

const actorOf = (auth: Auth) => ({
  type: 'user' as const,
  id: auth.user.id,
  email: auth.user.email,
  token_id: auth.kind === 'token' ? auth.token.id : null,
});

/**
 * What a plan rests on: the current content of every resource of its cluster and the distinct
 * narratives of the cluster's findings (a re-scan rewrites a sighting's narrative when ages, counts or
 * settings in the evidence change). A plan is stale when this differs from what it was generated from.
 */
export async function evidenceFingerprint(db: Db, tenantId: string, groupId: string): Promise<string> {
  const k = await findEvidenceParts(db, tenantId, groupId);
  return createHash('sha1')
    .update(k ?? '')
    .digest('hex');
}

async function ownPlan(db: Db, tenantId: string, planId: string, forUpdate = false) {
  if (!UUID.test(planId)) throw new NotFound('No such plan.');
  const plan = await findPlan(db, tenantId, planId, forUpdate);
  if (!plan) throw new NotFound('No such plan.');
  return plan;
}

/** The plan as the API shows it, with its steps and whether the evidence changed under it. */
export async function getPlan(db: Db, tenantId: string, planId: string, settings?: PlanSettings) {
  const current = await ownPlan(db, tenantId, planId);
  // A generation whose worker died never reports: past the timeout (with a margin), it has failed.
  if (
    settings &&
    current.status === 'generating' &&
    Date.now() - new Date(current.generation_started_at).getTime() > settings.generationTimeoutMs * 1.25
  ) {
    await markGenerationTimedOut(db, current.id, current.attempt);
  }
  // The plan and its steps from one snapshot. Read apart, a generation committing between the two reads
  // showed a plan still generating with its steps already there (and a page drew them without controls).
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (tx) => {
      const plan = await ownPlan(tx, tenantId, planId);
      const steps = await findPlanSteps(tx, plan.id);
      let stale = plan.stale;
      if (!stale && plan.evidence_hash && (OPEN_PLAN as readonly string[]).includes(plan.status)) {
        stale = (await evidenceFingerprint(tx, tenantId, plan.group_id)) !== plan.evidence_hash;
      }
      return {
        id: plan.id,
        finding_id: plan.finding_id,
        group_id: plan.group_id,
        status: plan.status,
        stale,
        engine: plan.engine,
        attempt: plan.attempt,
        created_at: plan.created_at,
        updated_at: plan.updated_at,
        resolved_at: plan.resolved_at,
        error: plan.error,
        steps: steps.map((s) => ({
          ...s,
          fix_command: s.fix_command ? { command: s.fix_command, executed_by_service: false as const } : null,
        })),
        final_check: plan.final_check,
      };
    });
}

function generationJobId(planId: string, attempt: number) {
  return `plan-${planId}-generate-${attempt}`;
}

async function enqueueGeneration(producer: JobProducer, tenantId: string, planId: string, attempt: number) {
  const job = await producer.enqueue(
    'plans',
    'generate',
    { tenant_id: tenantId, plan_id: planId },
    { jobId: generationJobId(planId, attempt) },
  );
  return String(job.id);
}

/**
 * Get-or-create the plan of a finding's duplicate cluster. One plan per (tenant, group): concurrent
 * callers race on the unique key and all get the same plan. Starting generation answers 202 with the
 * job id; an existing plan answers 200, unless it had failed (or its cluster regressed after it was
 * resolved), in which case this call generates it again from the same evidence (202).
 */
export async function getOrCreatePlan(
  db: Db,
  producer: JobProducer,
  auth: Auth,
  findingId: string,
  settings: PlanSettings,
) {
  const tenantId = auth.tenant.id;
  if (!UUID.test(findingId)) throw new NotFound('No such finding.');
  const finding = await findFindingForPlan(db, tenantId, findingId);
  if (!finding) throw new NotFound('No such finding.');
  const existing = await findPlanOfGroup(db, tenantId, finding.group_id);
  if (!existing && !isUnresolvedFindingStatus(finding.status))
    throw new Conflict(`The finding is ${finding.status}: there is nothing to resolve.`);
  // The primary finding of the cluster (the one listed), so every caller's plan speaks of the same one.
  const primary = await findPrimaryFinding(db, tenantId, finding.group_id);
  if (!existing) {
    const inserted = await insertPlanIfAbsent(db, {
      tenant_id: tenantId,
      group_id: finding.group_id,
      finding_id: primary?.id ?? finding.id,
      created_by: `user:${auth.user.email}`,
    });
    if (inserted) {
      const jobId = await enqueueGeneration(producer, tenantId, inserted.id, inserted.attempt);
      return { created: true, plan: { ...(await getPlan(db, tenantId, inserted.id)), job_id: jobId } };
    }
  }
  const plan = await findPlanOfGroupOrThrow(db, tenantId, finding.group_id);
  const regressed = plan.status === 'resolved' && isUnresolvedFindingStatus(finding.status);
  if (plan.status === 'failed' || regressed) {
    const restarted = await restartGeneration(db, producer, tenantId, plan.id, [plan.status]);
    if (restarted)
      return { created: true, plan: { ...(await getPlan(db, tenantId, plan.id)), job_id: restarted } };
  }
  return { created: false, plan: await getPlan(db, tenantId, plan.id, settings) };
}

/** Moves a plan back to generating (next attempt) if it is in one of `from`; answers the job id, or null. */
async function restartGeneration(
  db: Db,
  producer: JobProducer,
  tenantId: string,
  planId: string,
  from: string[],
) {
  const row = await markPlanRegenerating(db, tenantId, planId, from);
  if (!row) return null;
  return enqueueGeneration(producer, tenantId, planId, row.attempt);
}

/**
 * Regenerates a plan from the cluster's current evidence: offered when it failed, went stale, or its
 * final check found the issue still present. Not while it is generating, finalizing, or once resolved.
 */
export async function regeneratePlan(db: Db, producer: JobProducer, auth: Auth, planId: string) {
  const plan = await ownPlan(db, auth.tenant.id, planId);
  const jobId = await restartGeneration(db, producer, auth.tenant.id, plan.id, ['failed', 'ready']);
  if (!jobId) throw new Conflict(`The plan is ${plan.status}: it cannot be regenerated now.`);
  return { job_id: jobId, status: 'generating' };
}

async function readyPlanStep(tx: Db, tenantId: string, planId: string, seq: number) {
  const plan = await ownPlan(tx, tenantId, planId, true);
  if (plan.status !== 'ready')
    throw new Conflict(`The plan is ${plan.status}; steps can change only while it is ready.`);
  const step = await findPlanStep(tx, plan.id, seq);
  if (!step) throw new NotFound('No such step.');
  return { plan, step };
}

/** Records a wizard action in the finding's trail and the organization's audit log (same transaction). */
export async function recordPlanAction(
  tx: Db,
  tenantId: string,
  plan: { id: string; finding_id: string },
  actor: { type: 'user' | 'system'; id: string | null; email?: string | null; token_id?: string | null },
  action: string,
  seq: number | null,
  title: string,
  details: Record<string, unknown>,
) {
  const step: AuditStep = {
    step_kind: 'tool',
    tool_name: `plan.${action}`,
    title,
    query_sql: null,
    status: 'success',
    error_message: null,
    result_preview: { plan_id: plan.id, seq, by: actor.email ?? actor.type, ...details },
    row_count: null,
    duration_ms: null,
    is_self_correction: false,
    rerunnable: false,
    result_hash: null,
  };
  await appendSteps(tx, tenantId, plan.finding_id, [step]);
  await appendAudit(tx, tenantId, {
    actor,
    action: `plan.step_${action}`,
    target_type: 'resolution_plan',
    target_id: plan.id,
    details: { finding_id: plan.finding_id, seq, ...details },
  });
}

/** Marks a step done by hand. The final step is the platform's check: finalize runs it (409). */
export async function confirmStep(db: Db, auth: Auth, planId: string, seq: number) {
  await db.transaction().execute(async (tx) => {
    const { plan, step } = await readyPlanStep(tx, auth.tenant.id, planId, seq);
    if (step.final) throw new Conflict('The final step is the platform’s check: run finalize instead.');
    if (step.status === 'verified' || step.status === 'confirmed')
      throw new Conflict(`Step ${seq} is already ${step.status}.`);
    if (step.status === 'verifying')
      throw new Conflict(`Step ${seq} is being verified; wait for the result.`);
    await markStepConfirmed(tx, plan.id, seq, `user:${auth.user.email}`);
    await touchPlan(tx, plan.id);
    await recordPlanAction(
      tx,
      auth.tenant.id,
      plan,
      actorOf(auth),
      'confirmed',
      seq,
      `Plan step ${seq} confirmed by hand: ${step.title}`,
      {
        step_title: step.title,
      },
    );
  });
  return getPlan(db, auth.tenant.id, planId);
}

/** Skips a step with a reason (3..500 characters after trimming). The final step cannot be skipped (409). */
export async function skipStep(db: Db, auth: Auth, planId: string, seq: number, rawReason: unknown) {
  const reason = typeof rawReason === 'string' ? rawReason.trim() : '';
  if (reason.length < 3 || reason.length > 500)
    throw new BadRequest('reason is required: 3 to 500 characters saying why the step is skipped.');
  await db.transaction().execute(async (tx) => {
    const { plan, step } = await readyPlanStep(tx, auth.tenant.id, planId, seq);
    if (step.final)
      throw new Conflict('The final step cannot be skipped: it is the check that closes the finding.');
    if (step.status === 'verified' || step.status === 'confirmed')
      throw new Conflict(`Step ${seq} is already ${step.status}.`);
    if (step.status === 'verifying')
      throw new Conflict(`Step ${seq} is being verified; wait for the result.`);
    await markStepSkipped(tx, plan.id, seq, reason, `user:${auth.user.email}`);
    await touchPlan(tx, plan.id);
    await recordPlanAction(
      tx,
      auth.tenant.id,
      plan,
      actorOf(auth),
      'skipped',
      seq,
      `Plan step ${seq} skipped: ${step.title}`,
      {
        step_title: step.title,
        reason,
      },
    );
  });
  return getPlan(db, auth.tenant.id, planId);
}

/**
 * Starts the read-only check of a step (a job through the tenant's connector). A step without an
 * automatic check, or the final one, is refused (409). Asking again while it runs answers the same job.
 */
export async function requestVerify(db: Db, producer: JobProducer, auth: Auth, planId: string, seq: number) {
  await db.transaction().execute(async (tx) => {
    const { plan, step } = await readyPlanStep(tx, auth.tenant.id, planId, seq);
    if (step.final) throw new Conflict('The final step is the platform’s check: run finalize instead.');
    if (!step.check_spec) throw new Conflict(`Step ${seq} has no automatic check: confirm it by hand.`);
    if (step.status === 'verified' || step.status === 'confirmed')
      throw new Conflict(`Step ${seq} is already ${step.status}.`);
    await markStepVerifying(tx, plan.id, seq);
  });
  // While a check of the step is queued or running (retries included), asking again answers that job.
  const key = `plan-${planId}-verify-${seq}`;
  try {
    const job = await producer.enqueue(
      'plans',
      'verify',
      { tenant_id: auth.tenant.id, plan_id: planId, seq, user_id: auth.user.id },
      { deduplication: { id: key }, jobId: `${key}-${randomUUID()}` },
    );
    return { job_id: String(job.id), status: 'verifying' };
  } catch (e) {
    // Not queued: the step must not stay `verifying` (confirm and skip refuse a step being verified).
    await unmarkStepVerifying(db, planId, seq);
    throw e;
  }
}

/**
 * Starts the final check: re-sync the cluster's resources, re-run the detection. Only once every other
 * step is verified, confirmed or skipped (409 naming the others).
 */
export async function requestFinalize(db: Db, producer: JobProducer, auth: Auth, planId: string) {
  await db.transaction().execute(async (tx) => {
    const plan = await ownPlan(tx, auth.tenant.id, planId, true);
    if (plan.status === 'finalizing') return;
    if (plan.status !== 'ready')
      throw new Conflict(`The plan is ${plan.status}; finalize needs a ready plan.`);
    const steps = await findStepStatuses(tx, plan.id);
    const open = steps.filter((s) => !s.final && !DONE_STEP.includes(s.status));
    if (open.length)
      throw new Conflict(
        `Finalize needs every other step verified, confirmed or skipped first: step${open.length > 1 ? 's' : ''} ${open.map((s) => s.seq).join(', ')} ${open.length > 1 ? 'are' : 'is'} not.`,
      );
    await markPlanFinalizing(tx, plan.id);
  });
  const key = `plan-${planId}-finalize`;
  const job = await producer.enqueue(
    'plans',
    'finalize',
    { tenant_id: auth.tenant.id, plan_id: planId, user_id: auth.user.id },
    { deduplication: { id: key }, jobId: `${key}-${randomUUID()}` },
  );
  return { job_id: String(job.id), status: 'finalizing' };
}

/** Realized savings (monthly amounts of resolved clusters): realized this UTC month, and in total. */
export async function realizedSavings(db: Db, tenantId: string) {
  const row = await sumRealizedSavings(db, tenantId);
  return { this_month: row.this_month, total: row.total, resolved_plans: row.plans };
}
