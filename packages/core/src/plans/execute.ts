import type { Db } from '@opsi/db';
import {
  appendSteps,
  detectorById,
  evidenceSql,
  judge,
  reasoningStep,
  remediationSteps,
  runRecorded,
  DETECTOR_LIMITS,
  type PlanResource,
  type RemediationInput,
  type StepCheck,
  type StepDraft,
} from '@opsi/detectors';
import { describeDemo, PriceBook, refreshResources, type InventoryResource } from '@opsi/inventory';
import { appendAudit } from '../audit';
import { demoSpec } from '../inventory';
import { evidenceFingerprint, recordPlanAction } from './plans';
import {
  deletePlanSteps,
  findClusterResourceRows,
  findConnection,
  findFindingArns,
  findFindingToFinalize,
  findFindingToGenerate,
  findFixCommands,
  findLastEvidenceStep,
  findMatchingLearnings,
  findPlan,
  findPlanForGeneration,
  findPlanForVerify,
  findRecommendation,
  findStepForVerify,
  findUser,
  insertPlanLearning,
  insertPlanSteps,
  insertRealizedSavings,
  insertResolvedGroupEvents,
  lockPlanAttempt,
  lockPlanStatus,
  markClusterResolved,
  markFinalizeAbandoned,
  markFinalStep,
  markGenerationFailed,
  markPlanFinalized,
  markPlanReady,
  markPlanReadyAgain,
  markStepChecked,
  sumClusterSavings,
  touchPlan,
} from './repository';
import { runbookStepsFor, type PlanRunbook } from './runbooks';
import { validatePlanSteps, type PlanStepDraft } from './validate';

/** A hosted model that rewrites the built-in steps; its draft is validated like the built-in one. */
export interface PlanDrafter {
  readonly name: string;
  draft(input: RemediationInput, builtIn: StepDraft[], signal: AbortSignal): Promise<StepDraft[]>;
}

export interface PlanJobDeps {
  db: Db;
  drafter?: PlanDrafter | undefined;
  generationTimeoutMs: number;
}

class GenerationError extends Error {}

/** The cluster's resources (primary finding's first), with their current attributes. */
async function clusterResources(db: Db, tenantId: string, groupId: string, primaryId: string) {
  const rows = await findClusterResourceRows(db, tenantId, groupId, primaryId);
  const primaryArns = new Set((await findFindingArns(db, primaryId)).map((r) => r.arn));
  const out: PlanResource[] = rows.map(({ ...r }) => ({
    arn: r.arn,
    type: r.type,
    native_id: r.native_id,
    name: r.name,
    region: r.region,
    account_id: r.account_id,
    attributes: r.attributes,
    tags: r.tags ?? {},
    action_type: r.action_type,
    savings: Number(r.savings),
  }));
  // Keep the detector's order of the primary finding's resources (root object first), then the rest.
  const order = [...primaryArns];
  return out.sort((a, b) => {
    const ia = order.indexOf(a.arn);
    const ib = order.indexOf(b.arn);
    return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib) || a.arn.localeCompare(b.arn);
  });
}

/** Active learnings that speak of the cluster's resources or their service, newest first (at most 3). */
async function matchingLearnings(db: Db, tenantId: string, resources: PlanResource[]) {
  const ids = resources
    .flatMap((r) => [r.native_id, ...(r.name ? [r.name] : [])])
    .filter((s) => s.length >= 4);
  const services = [...new Set(resources.map((r) => r.tags?.service).filter((s): s is string => !!s))];
  if (!ids.length && !services.length) return [];
  return findMatchingLearnings(db, tenantId, ids, services);
}

async function buildPlan(
  db: Db,
  tenantId: string,
  plan: { id: string; group_id: string; finding_id: string },
) {
  const finding = await findFindingToGenerate(db, tenantId, plan.finding_id);
  const detector = detectorById(finding.check_id);
  if (!detector)
    throw new GenerationError(`No detector ${finding.check_id}: its findings have no remediation knowledge.`);
  const resources = await clusterResources(db, tenantId, plan.group_id, finding.id);
  const recommendation = await findRecommendation(db, finding.id);
  const evidence = await findLastEvidenceStep(db, finding.id);
  const input: RemediationInput = {
    findingId: finding.id,
    checkId: finding.check_id,
    title: finding.title,
    resources,
    evidenceRef: evidence ? `audit:${evidence.seq}` : null,
    recommendation: recommendation ? { ...recommendation, savings: Number(recommendation.savings) } : null,
  };
  const steps = remediationSteps(input);
  if (!steps) throw new GenerationError(`Detector ${finding.check_id} has no remediation knowledge.`);
  const learnings = await matchingLearnings(db, tenantId, resources);
  const runbook = await runbookStepsFor(db, tenantId, { checkId: finding.check_id, resources });
  return { input, steps, learnings, runbook, detector, arns: resources.map((r) => r.arn) };
}

function withKnowledge(
  steps: StepDraft[],
  learnings: Array<{ id: string; fact: string }>,
  runbook: PlanRunbook | null,
  input: RemediationInput,
): StepDraft[] {
  const out = steps.map((s) => ({ ...s, citations: [...s.citations] }));
  if (learnings.length && out[0]) {
    out[0].instructions += ` Team knowledge: ${learnings.map((l) => `“${l.fact}”`).join(' ')}`;
    out[0].citations.push(...learnings.map((l) => ({ kind: 'learning' as const, ref: l.id })));
  }
  if (!runbook) return out;
  const text = runbook.steps.map((t, i) => `${i + 1}. ${t}`).join(' ');
  if (runbook.source === 'tenant' && out.length < 7) {
    // The team's own runbook comes first, as a step of its own.
    out.unshift({
      title: `Follow your runbook: ${runbook.title}`.slice(0, 200),
      instructions: text.slice(0, 4000),
      citations: [
        { kind: 'finding', ref: input.findingId },
        { kind: 'runbook', ref: runbook.runbook_id },
      ],
      fix_command: null,
      verification: null,
      check: null,
      how_to_confirm: 'Confirm once the runbook’s steps are done.',
    });
  } else if (out[0]) {
    out[0].instructions = `${out[0].instructions} Runbook “${runbook.title}”: ${text}`.slice(0, 4000);
    out[0].citations.push({ kind: 'runbook', ref: runbook.runbook_id });
  }
  return out;
}

function finalStep(input: RemediationInput, detectorTitle: string, sqlText: string): PlanStepDraft {
  return {
    title: 'Final check: the platform re-runs the detection',
    instructions: `Finalize re-syncs the cluster's ${input.resources.length} resource(s) from the connection and re-runs the detection query "${detectorTitle}"${input.evidenceRef ? ` (the finding's evidence, ${input.evidenceRef})` : ''}, limited to them. No row left: the whole cluster is resolved, its savings are realized and the lesson is kept. A row left: the plan shows what is still there and can be regenerated.`,
    citations: [
      { kind: 'finding', ref: input.findingId },
      ...(input.evidenceRef ? [{ kind: 'evidence' as const, ref: input.evidenceRef }] : []),
    ],
    fix_command: null,
    verification: { command: sqlText, done_when: 'The query returns no row.' },
    check: null,
    how_to_confirm: null,
    final: true,
  };
}

function timeout<T>(work: Promise<T>, ms: number, controller: AbortController): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(
          new GenerationError(
            `Generation took longer than ${Math.round(ms / 1000)} s and was stopped; retry to generate again.`,
          ),
        );
      }, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Generates a plan's steps (the `plans.generate` job): the detector's remediation knowledge for the
 * cluster's resources, the tenant's matching learnings and runbooks, optionally rewritten by a hosted
 * model, validated, then the platform's final check. An error or the timeout marks the plan `failed`
 * with the reason (retryable); nothing is thrown, so the job does not retry by itself.
 */
export async function executeGeneratePlan(deps: PlanJobDeps, tenantId: string, planId: string) {
  const { db } = deps;
  const plan = await findPlanForGeneration(db, tenantId, planId);
  if (!plan || plan.status !== 'generating') return { outcome: 'skipped' as const };
  const controller = new AbortController();
  try {
    const result = await timeout(
      (async () => {
        const built = await buildPlan(db, tenantId, plan);
        let steps = withKnowledge(built.steps, built.learnings, built.runbook, built.input);
        let engine = 'builtin';
        const final = finalStep(built.input, built.detector.title, evidenceSql(built.detector, built.arns));
        const context = {
          findingId: built.input.findingId,
          evidenceRef: built.input.evidenceRef,
          resources: built.input.resources,
          learningIds: built.learnings.map((l) => l.id),
          runbookIds: built.runbook ? [built.runbook.runbook_id] : [],
          rationale: built.input.recommendation?.rationale ?? '',
        };
        const builtInProblems = validatePlanSteps(
          [...steps.map((s) => ({ ...s, final: false })), final],
          context,
        );
        if (builtInProblems.length)
          throw new GenerationError(`The built-in steps break the plan rules: ${builtInProblems.join('; ')}`);
        if (deps.drafter) {
          const drafted = await deps.drafter.draft(built.input, steps, controller.signal);
          const problems = validatePlanSteps(
            [...drafted.map((s) => ({ ...s, final: false })), final],
            context,
          );
          if (problems.length)
            throw new GenerationError(`The model's steps were rejected: ${problems.slice(0, 3).join('; ')}`);
          steps = drafted;
          engine = deps.drafter.name;
        }
        return { steps: [...steps.map((s) => ({ ...s, final: false })), final], engine };
      })(),
      deps.generationTimeoutMs,
      controller,
    );
    const hash = await evidenceFingerprint(db, tenantId, plan.group_id);
    await db.transaction().execute(async (tx) => {
      const current = await lockPlanAttempt(tx, plan.id);
      if (!current || current.status !== 'generating' || current.attempt !== plan.attempt) return;
      await deletePlanSteps(tx, plan.id);
      await insertPlanSteps(tx, tenantId, plan.id, result.steps);
      await markPlanReady(tx, plan.id, hash, result.engine);
    });
    return { outcome: 'ready' as const, steps: result.steps.length };
  } catch (e) {
    const reason =
      e instanceof GenerationError ? e.message : `Generation failed: ${(e as Error).message.slice(0, 500)}`;
    await markGenerationFailed(db, plan.id, plan.attempt, reason);
    return { outcome: 'failed' as const, reason };
  }
}

/** The connector cannot describe live resources (only the demo environment answers describe calls yet). */
export class CannotDescribe extends Error {}

/** Describes resources through the tenant's connection, now. */
export async function describeThroughConnector(db: Db, tenantId: string, arns: string[]) {
  const connection = await findConnection(db, tenantId);
  if (!connection) throw new CannotDescribe('This tenant has no connected environment.');
  if (connection.kind !== 'demo')
    throw new CannotDescribe(
      `The ${connection.kind} connection cannot run live describe calls yet: confirm the step by hand after running the command shown.`,
    );
  const spec = await demoSpec(db, tenantId);
  return { connectionId: connection.id, ...describeDemo(spec, arns, tenantId) };
}

const preview = (s: string) => s.slice(0, 500);

export interface VerifyOptions {
  tries: number;
  retries: number;
}

/**
 * Runs a step's read-only check (the `plans.verify` job) and judges it against its "done when". Passed:
 * the step is verified. Not yet reflected: `retry` (the job re-runs shortly; the step stays verifying),
 * and after the last retry the step shows failed_check. Judging failed (the connector cannot describe,
 * an unreadable check): nothing is marked, the step goes back to where it was, and verify may be repeated.
 */
export async function executeVerifyStep(
  deps: { db: Db },
  payload: { tenant_id: string; plan_id: string; seq: number; user_id?: string | undefined },
  opts: VerifyOptions,
): Promise<{ outcome: 'verified' | 'retry' | 'failed_check' | 'error' | 'skipped'; observed?: string }> {
  const { db } = deps;
  const tenantId = payload.tenant_id;
  const plan = await findPlanForVerify(db, tenantId, payload.plan_id);
  const step = plan ? await findStepForVerify(db, plan.id, payload.seq) : undefined;
  if (!plan || !step || step.status !== 'verifying' || plan.status !== 'ready') return { outcome: 'skipped' };
  const actor = await actorFor(db, payload.user_id);
  const check = step.check_spec as unknown as StepCheck | null;
  let judgement: { passed: boolean; observed: string };
  try {
    if (!check) throw new CannotDescribe('The step has no automatic check.');
    const described = await describeThroughConnector(db, tenantId, [check.arn]);
    const r = described.resources.get(check.arn) ?? null;
    judgement = judge(check.expect, r ? { attributes: r.attributes } : null);
  } catch (e) {
    const detail =
      e instanceof CannotDescribe ? e.message : `The check could not be judged: ${(e as Error).message}`;
    await db.transaction().execute(async (tx) => {
      const updated = await markStepChecked(tx, plan.id, step.seq, {
        status: 'pending',
        last_check: JSON.stringify({
          at: new Date().toISOString(),
          outcome: 'error',
          output_preview: preview(detail),
        }),
      });
      if (Number(updated.numUpdatedRows))
        await recordPlanAction(
          tx,
          tenantId,
          plan,
          actor,
          'verify_error',
          step.seq,
          `Plan step ${step.seq} could not be checked: ${step.title}`,
          {
            detail: preview(detail),
          },
        );
    });
    return { outcome: 'error', observed: detail };
  }
  const at = new Date().toISOString();
  if (!judgement.passed && opts.tries < opts.retries) {
    await markStepChecked(db, plan.id, step.seq, {
      last_check: JSON.stringify({ at, outcome: 'not_yet', output_preview: preview(judgement.observed) }),
    });
    return { outcome: 'retry', observed: judgement.observed };
  }
  const status = judgement.passed ? 'verified' : 'failed_check';
  await db.transaction().execute(async (tx) => {
    const updated = await markStepChecked(tx, plan.id, step.seq, {
      status,
      last_check: JSON.stringify({
        at,
        outcome: judgement.passed ? 'passed' : 'not_done',
        output_preview: preview(judgement.observed),
      }),
      ...(judgement.passed
        ? { done_by: actor.email ? `user:${actor.email}` : 'plan.verify', done_at: new Date() }
        : {}),
    });
    if (!Number(updated.numUpdatedRows)) return;
    await touchPlan(tx, plan.id);
    await recordPlanAction(
      tx,
      tenantId,
      plan,
      actor,
      judgement.passed ? 'verified' : 'verify_failed',
      step.seq,
      `Plan step ${step.seq} ${judgement.passed ? 'verified' : 'not done yet'}: ${step.title}`,
      {
        command: (step.verification as { command?: string } | null)?.command ?? null,
        done_when: (step.verification as { done_when?: string } | null)?.done_when ?? null,
        observed: preview(judgement.observed),
        tries: opts.tries + 1,
      },
    );
  });
  return { outcome: status, observed: judgement.observed };
}

async function actorFor(db: Db, userId: string | undefined) {
  if (!userId) return { type: 'system' as const, id: null };
  const user = await findUser(db, userId);
  return user
    ? { type: 'user' as const, id: user.id, email: user.email }
    : { type: 'system' as const, id: null };
}

/**
 * The final check (the `plans.finalize` job): re-sync the cluster's resources through the connection,
 * re-run the detection query limited to them, and either resolve the whole cluster (evidence and
 * resolver recorded, savings realized, a learning with source `plan`) or record `still_present`.
 */
export async function executeFinalizePlan(
  deps: { db: Db },
  payload: { tenant_id: string; plan_id: string; user_id?: string | undefined },
) {
  const { db } = deps;
  const tenantId = payload.tenant_id;
  const plan = await findPlan(db, tenantId, payload.plan_id);
  if (!plan || plan.status !== 'finalizing') return { outcome: 'skipped' as const };
  const actor = await actorFor(db, payload.user_id);
  const finding = await findFindingToFinalize(db, plan.finding_id);
  const detector = detectorById(finding.check_id);
  const resources = await clusterResources(db, tenantId, plan.group_id, finding.id);
  const arns = resources.map((r) => r.arn);
  const at = new Date();

  let rows: unknown[] = [];
  let recorded: Awaited<ReturnType<typeof runRecorded>> | null = null;
  let syncNote = '';
  try {
    const described = await describeThroughConnector(db, tenantId, arns);
    const book = await PriceBook.load(db);
    const refreshed = await refreshResources(
      db,
      { tenantId, connectionId: described.connectionId, scanId: null },
      described.observedAt,
      described.resources as Map<string, InventoryResource | null>,
      book,
    );
    syncNote = `Re-synced ${arns.length} resource(s): ${refreshed.updated} changed, ${refreshed.deleted} gone, ${refreshed.unchanged} unchanged.`;
  } catch (e) {
    if (!(e instanceof CannotDescribe)) throw e;
    syncNote = `No live re-sync (${e.message}); the detection runs over the last scan's inventory.`;
  }
  if (detector && arns.length) {
    recorded = await runRecorded(
      db,
      tenantId,
      `Final check: ${finding.title}`,
      evidenceSql(detector, arns),
      DETECTOR_LIMITS,
    );
    if (!recorded.result) {
      // The query failed twice: nothing is decided; the plan is ready again and finalize may be repeated.
      await db.transaction().execute(async (tx) => {
        await appendSteps(tx, tenantId, finding.id, recorded!.steps);
        await markPlanReadyAgain(tx, plan.id);
      });
      return { outcome: 'error' as const };
    }
    rows = recorded.result.rows;
  }
  const resolved = rows.length === 0;
  const realized = resolved ? await realizedAmount(db, plan.group_id, finding.estimated_savings) : 0;
  const summary = resolved
    ? `${syncNote} The detection query returns no row for the cluster's ${arns.length} resource(s): the issue is gone. ${realized > 0 ? `Realized savings: $${realized.toFixed(2)} a month.` : ''}`.trim()
    : `${syncNote} The detection query still returns ${rows.length} row(s): ${rowsSummary(rows)}. The issue is still present; regenerate the plan or finish the steps and finalize again.`;

  await db.transaction().execute(async (tx) => {
    const current = await lockPlanStatus(tx, plan.id);
    if (current?.status !== 'finalizing') return;
    const steps = [
      {
        step_kind: 'tool' as const,
        tool_name: 'plan.finalize',
        title: 'Final check of the resolution plan: re-sync',
        query_sql: null,
        status: 'success' as const,
        error_message: null,
        result_preview: { plan_id: plan.id, text: syncNote },
        row_count: arns.length,
        duration_ms: null,
        is_self_correction: false,
        rerunnable: false,
        result_hash: null,
      },
      ...(recorded?.steps ?? []),
      reasoningStep(
        resolved ? 'Resolved by the plan’s final check' : 'Still present after the plan’s final check',
        summary,
      ),
    ];
    await appendSteps(tx, tenantId, finding.id, steps);
    const finalCheck = { outcome: resolved ? 'resolved' : 'still_present', summary, at: at.toISOString() };
    await markFinalStep(tx, plan.id, {
      status: resolved ? 'verified' : 'failed_check',
      last_check: JSON.stringify({
        at: at.toISOString(),
        outcome: resolved ? 'passed' : 'not_done',
        output_preview: preview(summary),
      }),
      ...(resolved ? { done_by: 'plan.final_check', done_at: at } : {}),
    });
    await markPlanFinalized(tx, plan.id, resolved, finalCheck, at);
    const resolver = actor.email ? `user:${actor.email}` : `plan:${plan.id}`;
    let closed: string[] = [];
    if (resolved) {
      const members = await markClusterResolved(tx, tenantId, plan.group_id, resolver, at);
      closed = members.map((m) => m.id);
      if (closed.length)
        await insertResolvedGroupEvents(tx, tenantId, plan.group_id, plan.id, closed, resolver);
      await insertRealizedSavings(tx, {
        tenant_id: tenantId,
        plan_id: plan.id,
        attempt: plan.attempt,
        group_id: plan.group_id,
        finding_id: finding.id,
        monthly_usd: realized,
      });
      const fixes = await findFixCommands(tx, plan.id);
      const service = resources.map((r) => r.tags?.service).find((s) => !!s);
      const fact =
        `Resolved "${finding.title}" (${finding.check_id}) with a verified plan on ${at.toISOString().slice(0, 10)}${fixes.length ? `: ${fixes.map((f) => f.fix_command).join(' ; ')}` : ''}. The final check's detection query returned no row.`.slice(
          0,
          2000,
        );
      await insertPlanLearning(tx, {
        tenant_id: tenantId,
        fact,
        service: service ?? null,
        created_by: `plan:${plan.id}`,
        source: 'plan',
      });
    }
    await appendAudit(tx, tenantId, {
      actor,
      action: 'plan.finalized',
      target_type: 'resolution_plan',
      target_id: plan.id,
      details: {
        finding_id: finding.id,
        outcome: finalCheck.outcome,
        resolved_findings: closed,
        realized_monthly: realized,
      },
    });
  });
  return { outcome: resolved ? ('resolved' as const) : ('still_present' as const), rows: rows.length };
}

/** Each resource of the cluster once, at its largest savings; the per-finding estimate when none is priced. */
async function realizedAmount(db: Db, groupId: string, estimate: number) {
  const total = await sumClusterSavings(db, groupId);
  const grounded = Math.round(Number(total ?? 0) * 100) / 100;
  return grounded > 0 ? grounded : Math.max(0, Math.round(Number(estimate) * 100) / 100);
}

function rowsSummary(rows: unknown[]): string {
  return rows
    .slice(0, 3)
    .map((row) => {
      const r = row as Record<string, unknown>;
      return String(r.native_id ?? r.arn ?? JSON.stringify(r).slice(0, 80));
    })
    .join(', ');
}

/** A final check that failed for good (infrastructure): the plan is ready again, with the reason. */
export async function abandonFinalize(db: Db, tenantId: string, planId: string, reason: string) {
  await markFinalizeAbandoned(db, tenantId, planId, reason);
}
