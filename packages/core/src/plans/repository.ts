import { sql, type Database, type Db, type PlanStepStatus, type Transaction } from '@opsi/db';
import { UNRESOLVED_FINDING_STATUSES } from '@opsi/contracts';

/** The pool, or the transaction a statement must run in. */
type Tx = Db | Transaction<Database>;

/** A plan step as the generation writes it. */
export interface PlanStepRow {
  title: string;
  instructions: string;
  citations: unknown;
  fix_command: string | null;
  verification: unknown;
  check: unknown;
  how_to_confirm: string | null;
  final: boolean;
}

// ---- resolution_plans --------------------------------------------------------------------------

/** The content of a plan's cluster (resources and finding narratives) as one sorted key string. */
export async function findEvidenceParts(db: Tx, tenantId: string, groupId: string) {
  const rows = await sql<{ k: string }>`
    select coalesce(string_agg(k, '|' order by k), '') as k from (
      select 'r:' || r.arn || ':' || r.content_hash || ':' || (r.deleted_at is null)::text as k
      from resources r
      where r.tenant_id = ${tenantId}
        and r.arn in (select fr.arn from finding_resources fr join findings f on f.id = fr.finding_id
                      where f.tenant_id = ${tenantId} and f.group_id = ${groupId})
      union
      select 'n:' || md5(f.narrative) from findings f where f.tenant_id = ${tenantId} and f.group_id = ${groupId}
    ) as parts`.execute(db);
  return rows.rows[0]?.k;
}

export function findPlan(db: Tx, tenantId: string, planId: string, forUpdate = false) {
  let q = db
    .selectFrom('resolution_plans')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', planId);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** A generation that never reported: failed, unless a newer attempt started meanwhile. */
export function markGenerationTimedOut(db: Tx, planId: string, attempt: number) {
  return db
    .updateTable('resolution_plans')
    .set({
      status: 'failed',
      error:
        'Generation did not finish within about 2 minutes; retry to generate again from the same evidence.',
      updated_at: new Date(),
    })
    .where('id', '=', planId)
    .where('status', '=', 'generating')
    .where('attempt', '=', attempt)
    .execute();
}

export function findPlanOfGroup(db: Tx, tenantId: string, groupId: string) {
  return db
    .selectFrom('resolution_plans')
    .select(['id', 'status', 'attempt'])
    .where('tenant_id', '=', tenantId)
    .where('group_id', '=', groupId)
    .executeTakeFirst();
}

export function findPlanOfGroupOrThrow(db: Tx, tenantId: string, groupId: string) {
  return db
    .selectFrom('resolution_plans')
    .select(['id', 'status', 'attempt'])
    .where('tenant_id', '=', tenantId)
    .where('group_id', '=', groupId)
    .executeTakeFirstOrThrow();
}

/** The cluster's plan, unless another caller inserted it first (then undefined). */
export function insertPlanIfAbsent(
  db: Tx,
  values: { tenant_id: string; group_id: string; finding_id: string; created_by: string },
) {
  return db
    .insertInto('resolution_plans')
    .values(values)
    .onConflict((oc) => oc.columns(['tenant_id', 'group_id']).doNothing())
    .returning(['id', 'attempt'])
    .executeTakeFirst();
}

/** Back to generating at the next attempt, if the plan is in one of `from`. */
export function markPlanRegenerating(db: Tx, tenantId: string, planId: string, from: string[]) {
  return db
    .updateTable('resolution_plans')
    .set((eb) => ({
      status: 'generating',
      attempt: eb('attempt', '+', 1),
      error: null,
      stale: false,
      final_check: null,
      resolved_at: null,
      generation_started_at: new Date(),
      updated_at: new Date(),
    }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', planId)
    .where('status', 'in', from as never[])
    .returning(['attempt'])
    .executeTakeFirst();
}

export function touchPlan(db: Tx, planId: string) {
  return db
    .updateTable('resolution_plans')
    .set({ updated_at: new Date() })
    .where('id', '=', planId)
    .execute();
}

export function markPlanFinalizing(db: Tx, planId: string) {
  return db
    .updateTable('resolution_plans')
    .set({ status: 'finalizing', error: null, updated_at: new Date() })
    .where('id', '=', planId)
    .execute();
}

export function findPlanForGeneration(db: Tx, tenantId: string, planId: string) {
  return db
    .selectFrom('resolution_plans')
    .select(['id', 'group_id', 'finding_id', 'status', 'attempt'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', planId)
    .executeTakeFirst();
}

export function lockPlanAttempt(db: Tx, planId: string) {
  return db
    .selectFrom('resolution_plans')
    .select(['status', 'attempt'])
    .where('id', '=', planId)
    .forUpdate()
    .executeTakeFirst();
}

export function markPlanReady(db: Tx, planId: string, evidenceHash: string, engine: string) {
  return db
    .updateTable('resolution_plans')
    .set({
      status: 'ready',
      error: null,
      stale: false,
      evidence_hash: evidenceHash,
      engine,
      updated_at: new Date(),
    })
    .where('id', '=', planId)
    .execute();
}

export function markGenerationFailed(db: Tx, planId: string, attempt: number, reason: string) {
  return db
    .updateTable('resolution_plans')
    .set({ status: 'failed', error: reason, updated_at: new Date() })
    .where('id', '=', planId)
    .where('status', '=', 'generating')
    .where('attempt', '=', attempt)
    .execute();
}

export function findPlanForVerify(db: Tx, tenantId: string, planId: string) {
  return db
    .selectFrom('resolution_plans')
    .select(['id', 'finding_id', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', planId)
    .executeTakeFirst();
}

export function markPlanReadyAgain(db: Tx, planId: string) {
  return db
    .updateTable('resolution_plans')
    .set({ status: 'ready', updated_at: new Date() })
    .where('id', '=', planId)
    .execute();
}

export function lockPlanStatus(db: Tx, planId: string) {
  return db
    .selectFrom('resolution_plans')
    .select('status')
    .where('id', '=', planId)
    .forUpdate()
    .executeTakeFirst();
}

export function markPlanFinalized(db: Tx, planId: string, resolved: boolean, finalCheck: unknown, at: Date) {
  return db
    .updateTable('resolution_plans')
    .set({
      status: resolved ? 'resolved' : 'ready',
      final_check: JSON.stringify(finalCheck),
      resolved_at: resolved ? at : null,
      updated_at: new Date(),
    })
    .where('id', '=', planId)
    .execute();
}

export function markFinalizeAbandoned(db: Tx, tenantId: string, planId: string, reason: string) {
  return db
    .updateTable('resolution_plans')
    .set({
      status: 'ready',
      error: `The final check failed: ${reason.slice(0, 500)}. Finalize again.`,
      updated_at: new Date(),
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', planId)
    .where('status', '=', 'finalizing')
    .execute();
}

// ---- resolution_plan_steps ---------------------------------------------------------------------

export function findPlanSteps(db: Tx, planId: string) {
  return db
    .selectFrom('resolution_plan_steps')
    .select([
      'seq',
      'title',
      'instructions',
      'citations',
      'fix_command',
      'verification',
      'how_to_confirm',
      'status',
      'final',
      'last_check',
      'skip_reason',
      'done_by',
      'done_at',
    ])
    .where('plan_id', '=', planId)
    .orderBy('seq')
    .execute();
}

export function findPlanStep(db: Tx, planId: string, seq: number) {
  return db
    .selectFrom('resolution_plan_steps')
    .selectAll()
    .where('plan_id', '=', planId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

export function findStepStatuses(db: Tx, planId: string) {
  return db
    .selectFrom('resolution_plan_steps')
    .select(['seq', 'status', 'final'])
    .where('plan_id', '=', planId)
    .orderBy('seq')
    .execute();
}

export function markStepConfirmed(db: Tx, planId: string, seq: number, doneBy: string) {
  return db
    .updateTable('resolution_plan_steps')
    .set({
      status: 'confirmed',
      done_by: doneBy,
      done_at: new Date(),
      skip_reason: null,
    })
    .where('plan_id', '=', planId)
    .where('seq', '=', seq)
    .execute();
}

export function markStepSkipped(db: Tx, planId: string, seq: number, reason: string, doneBy: string) {
  return db
    .updateTable('resolution_plan_steps')
    .set({
      status: 'skipped',
      skip_reason: reason,
      done_by: doneBy,
      done_at: new Date(),
    })
    .where('plan_id', '=', planId)
    .where('seq', '=', seq)
    .execute();
}

export function markStepVerifying(db: Tx, planId: string, seq: number) {
  return db
    .updateTable('resolution_plan_steps')
    .set({ status: 'verifying' })
    .where('plan_id', '=', planId)
    .where('seq', '=', seq)
    .execute();
}

/** A verification that was never queued: the step back to pending. */
export function unmarkStepVerifying(db: Tx, planId: string, seq: number) {
  return db
    .updateTable('resolution_plan_steps')
    .set({ status: 'pending' })
    .where('plan_id', '=', planId)
    .where('seq', '=', seq)
    .where('status', '=', 'verifying')
    .execute();
}

export function deletePlanSteps(db: Tx, planId: string) {
  return db.deleteFrom('resolution_plan_steps').where('plan_id', '=', planId).execute();
}

export function insertPlanSteps(db: Tx, tenantId: string, planId: string, steps: PlanStepRow[]) {
  return db
    .insertInto('resolution_plan_steps')
    .values(
      steps.map((s, i) => ({
        plan_id: planId,
        tenant_id: tenantId,
        seq: i + 1,
        title: s.title,
        instructions: s.instructions,
        citations: JSON.stringify(s.citations),
        fix_command: s.fix_command,
        verification: s.verification ? JSON.stringify(s.verification) : null,
        check_spec: s.check ? JSON.stringify(s.check) : null,
        how_to_confirm: s.how_to_confirm,
        final: s.final,
      })),
    )
    .execute();
}

export function findStepForVerify(db: Tx, planId: string, seq: number) {
  return db
    .selectFrom('resolution_plan_steps')
    .select(['seq', 'title', 'status', 'check_spec', 'verification'])
    .where('plan_id', '=', planId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

/** Records a check's outcome on a step still verifying; with `status`, the step leaves verifying. */
export function markStepChecked(
  db: Tx,
  planId: string,
  seq: number,
  set: {
    status?: PlanStepStatus;
    last_check: string;
    done_by?: string;
    done_at?: Date;
  },
) {
  return db
    .updateTable('resolution_plan_steps')
    .set(set)
    .where('plan_id', '=', planId)
    .where('seq', '=', seq)
    .where('status', '=', 'verifying')
    .executeTakeFirst();
}

export function markFinalStep(
  db: Tx,
  planId: string,
  set: { status: PlanStepStatus; last_check: string; done_by?: string; done_at?: Date },
) {
  return db
    .updateTable('resolution_plan_steps')
    .set(set)
    .where('plan_id', '=', planId)
    .where('final', '=', true)
    .execute();
}

export function findFixCommands(db: Tx, planId: string) {
  return db
    .selectFrom('resolution_plan_steps')
    .select(['fix_command', 'status'])
    .where('plan_id', '=', planId)
    .where('fix_command', 'is not', null)
    .orderBy('seq')
    .execute();
}

// ---- findings and their cluster ----------------------------------------------------------------

export function findFindingForPlan(db: Tx, tenantId: string, findingId: string) {
  return db
    .selectFrom('findings')
    .select(['id', 'group_id', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', findingId)
    .executeTakeFirst();
}

/** The primary finding of a cluster: the one listed, earliest detected. */
export function findPrimaryFinding(db: Tx, tenantId: string, groupId: string) {
  return db
    .selectFrom('findings')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('group_id', '=', groupId)
    .where('status', '!=', 'confirmed')
    .orderBy('detected_at')
    .orderBy('id')
    .executeTakeFirst();
}

export function findFindingToGenerate(db: Tx, tenantId: string, findingId: string) {
  return db
    .selectFrom('findings')
    .select(['id', 'check_id', 'title'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', findingId)
    .executeTakeFirstOrThrow();
}

export function findFindingToFinalize(db: Tx, findingId: string) {
  return db
    .selectFrom('findings')
    .select(['id', 'check_id', 'title', 'estimated_savings'])
    .where('id', '=', findingId)
    .executeTakeFirstOrThrow();
}

/** Each resource of a cluster once (distinct on arn, the primary finding's row first). */
export async function findClusterResourceRows(db: Tx, tenantId: string, groupId: string, primaryId: string) {
  const rows = await sql<{
    arn: string;
    type: string;
    native_id: string;
    name: string | null;
    region: string;
    account_id: string;
    attributes: Record<string, unknown> | null;
    tags: Record<string, string> | null;
    action_type: string;
    savings: number;
  }>`
    select distinct on (fr.arn) fr.arn, fr.type, fr.native_id, fr.name, fr.region, fr.account_id,
           case when r.deleted_at is null then r.attributes end as attributes, r.tags,
           fr.action_type, fr.savings::float8 as savings, (f.id = ${primaryId}) as primary_first
    from finding_resources fr
    join findings f on f.id = fr.finding_id
    left join resources r on r.tenant_id = fr.tenant_id and r.arn = fr.arn
    where f.tenant_id = ${tenantId} and f.group_id = ${groupId}
    order by fr.arn, (f.id = ${primaryId}) desc, fr.savings desc`.execute(db);
  return rows.rows;
}

export function findFindingArns(db: Tx, findingId: string) {
  return db.selectFrom('finding_resources').select('arn').where('finding_id', '=', findingId).execute();
}

export function findRecommendation(db: Tx, findingId: string) {
  return db
    .selectFrom('recommendations')
    .select(['rationale', 'action_type', 'savings'])
    .where('finding_id', '=', findingId)
    .executeTakeFirst();
}

/** The finding's last successful evidence query in its audit trail. */
export function findLastEvidenceStep(db: Tx, findingId: string) {
  return db
    .selectFrom('finding_audit_steps')
    .select('seq')
    .where('finding_id', '=', findingId)
    .where('step_kind', '=', 'query')
    .where('status', '=', 'success')
    .orderBy('seq', 'desc')
    .executeTakeFirst();
}

/** Every unresolved finding of the cluster resolved; answers the ones closed. */
export function markClusterResolved(db: Tx, tenantId: string, groupId: string, resolver: string, at: Date) {
  return db
    .updateTable('findings')
    .set({ status: 'resolved', resolved_at: at, resolved_by: resolver, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('group_id', '=', groupId)
    .where('status', 'in', UNRESOLVED_FINDING_STATUSES)
    .returning(['id', 'status'])
    .execute();
}

export function insertResolvedGroupEvents(
  db: Tx,
  tenantId: string,
  groupId: string,
  planId: string,
  findingIds: string[],
  resolver: string,
) {
  return db
    .insertInto('finding_group_events')
    .values(
      findingIds.map((id) => ({
        tenant_id: tenantId,
        group_id: groupId,
        finding_id: id,
        kind: 'resolved',
        agent: `plan:${planId}`,
        status: 'resolved',
        detail: JSON.stringify({ plan_id: planId, resolver }),
      })),
    )
    .execute();
}

/** Each resource of the cluster once, at its largest savings. */
export async function sumClusterSavings(db: Tx, groupId: string) {
  const r = await sql<{ total: number }>`
    select coalesce(sum(s), 0)::float8 as total from (
      select max(fr.savings) as s from finding_resources fr join findings f on f.id = fr.finding_id
      where f.group_id = ${groupId} group by fr.arn) as per_resource`.execute(db);
  return r.rows[0]?.total;
}

// ---- savings, learnings, connections, users ----------------------------------------------------

export function insertRealizedSavings(
  db: Tx,
  values: {
    tenant_id: string;
    plan_id: string;
    attempt: number;
    group_id: string;
    finding_id: string;
    monthly_usd: number;
  },
) {
  return db
    .insertInto('realized_savings')
    .values(values)
    .onConflict((oc) => oc.columns(['plan_id', 'attempt']).doNothing())
    .execute();
}

export async function sumRealizedSavings(db: Tx, tenantId: string) {
  const r = await sql<{ this_month: number; total: number; plans: number }>`
    select coalesce(sum(monthly_usd) filter (where realized_at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC'), 0)::float8 as this_month,
           coalesce(sum(monthly_usd), 0)::float8 as total,
           count(*)::int as plans
    from realized_savings where tenant_id = ${tenantId}`.execute(db);
  return r.rows[0]!;
}

/** Active learnings naming one of `ids` or of `services`, newest first (at most 3). */
export async function findMatchingLearnings(db: Tx, tenantId: string, ids: string[], services: string[]) {
  const rows = await sql<{ id: string; fact: string }>`
    select id, fact from learnings
    where tenant_id = ${tenantId} and status = 'active'
      and (${services.length ? sql`service = any(${services}::text[])` : sql`false`}
           or exists (select 1 from unnest(${ids}::text[]) as i(x) where position(lower(i.x) in lower(fact)) > 0))
    order by created_at desc limit 3`.execute(db);
  return rows.rows;
}

export function insertPlanLearning(
  db: Tx,
  values: { tenant_id: string; fact: string; service: string | null; created_by: string; source: 'plan' },
) {
  return db.insertInto('learnings').values(values).execute();
}

export function findConnection(db: Tx, tenantId: string) {
  return db
    .selectFrom('cloud_connections')
    .select(['id', 'kind'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

export function findUser(db: Tx, userId: string) {
  return db.selectFrom('users').select(['id', 'email']).where('id', '=', userId).executeTakeFirst();
}
