import { createHash } from 'node:crypto';
import { activeFindingStatuses, sql, type Db } from '@opsi/db';
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';
import { SEVERITY_RANK, evidenceSql, type Detector, type DetectorRow, type FindingDraft } from './detector';
import { DEFAULT_LIMITS, runSandboxed, type SandboxLimits, type SandboxResult } from './sandbox';

export const DETECTOR_AGENT = 'pulse.detector';

/** An audit step as the contract defines it (seq is given when it is attached to a finding). */
export interface AuditStep {
  step_kind: 'query' | 'tool' | 'reasoning';
  tool_name: string;
  title: string;
  query_sql: string | null;
  status: 'success' | 'error';
  error_message: string | null;
  result_preview: unknown;
  row_count: number | null;
  duration_ms: number | null;
  is_self_correction: boolean;
  rerunnable: boolean;
  result_hash: string | null;
}

const PREVIEW_ROWS = 5;

/**
 * Detectors read whole inventories: far larger caps than an interactive re-run. Memory and disk too:
 * over the xlarge demo (about 1,000,000 resources) six detectors sort or hash more than the re-run's
 * 64 MB of temporary files (finops.ec2_low_cpu sorts 6 million metric rows) and failed at once, twice,
 * finding nothing (bench/pulse); 64 MB of work_mem per sort or hash also shortens the ones that spill.
 */
export const DETECTOR_LIMITS: SandboxLimits = {
  timeoutMs: 30_000,
  maxRows: 50_000,
  maxBytes: 64 * 1024 * 1024,
  workMemKb: 64 * 1024,
  tempFileLimitKb: 4 * 1024 * 1024,
};

function queryStep(
  title: string,
  query: string,
  result: SandboxResult | null,
  error: Error | null,
  selfCorrection: boolean,
): AuditStep {
  return {
    step_kind: 'query',
    tool_name: 'inventory.sql',
    title,
    query_sql: query,
    status: error ? 'error' : 'success',
    error_message: error ? error.message.slice(0, 1000) : null,
    result_preview: result ? result.rows.slice(0, PREVIEW_ROWS) : null,
    row_count: result ? result.rowCount : null,
    duration_ms: result ? result.durationMs : null,
    is_self_correction: selfCorrection,
    rerunnable: !error,
    result_hash: result?.resultHash ?? null,
  };
}

/**
 * Runs a query in the sandbox and records it. A failure is kept in the trail, and the query is tried
 * once more with a longer timeout; if that works, its step is a self-correction.
 */
export async function runRecorded(
  db: Db,
  tenantId: string,
  title: string,
  query: string,
  limits: SandboxLimits = DEFAULT_LIMITS,
) {
  const steps: AuditStep[] = [];
  try {
    const result = await runSandboxed(db, tenantId, query, limits);
    steps.push(queryStep(title, query, result, null, false));
    return { result, steps };
  } catch (first) {
    steps.push(queryStep(title, query, null, first as Error, false));
    try {
      const result = await runSandboxed(db, tenantId, query, { ...limits, timeoutMs: limits.timeoutMs * 4 });
      steps.push(queryStep(`${title} (retried with a longer timeout)`, query, result, null, true));
      return { result, steps };
    } catch (second) {
      steps.push(queryStep(`${title} (retry)`, query, null, second as Error, false));
      return { result: null, steps };
    }
  }
}

export function reasoningStep(title: string, text: string): AuditStep {
  return {
    step_kind: 'reasoning',
    tool_name: 'pulse.reasoning',
    title,
    query_sql: null,
    status: 'success',
    error_message: null,
    result_preview: { text },
    row_count: null,
    duration_ms: 0,
    is_self_correction: false,
    rerunnable: false,
    result_hash: null,
  };
}

export function fingerprintOf(checkId: string, rootKey: string): string {
  return createHash('sha1').update(`${checkId}|${rootKey}`).digest('hex');
}

export interface DetectionSummary {
  detectors: number;
  queries: number;
  failedQueries: number;
  findings: number;
  newFindings: number;
  rediscovered: number;
  regressed: number;
  clustered: number;
}

const ACTIVE = ACTIVE_FINDING_STATUSES;

/** Attaches steps to a finding, continuing its sequence. */
export async function appendSteps(
  tx: Db,
  tenantId: string,
  findingId: string,
  steps: AuditStep[],
): Promise<void> {
  if (!steps.length) return;
  const last = await tx
    .selectFrom('finding_audit_steps')
    .select(({ fn }) => fn.max('seq').as('seq'))
    .where('finding_id', '=', findingId)
    .executeTakeFirst();
  let seq = Number(last?.seq ?? 0);
  await tx
    .insertInto('finding_audit_steps')
    .values(
      steps.map((s) => ({
        tenant_id: tenantId,
        finding_id: findingId,
        seq: ++seq,
        ...s,
        result_preview: s.result_preview === null ? null : JSON.stringify(s.result_preview),
      })),
    )
    .execute();
}

async function writeResources(
  tx: Db,
  tenantId: string,
  findingId: string,
  draft: FindingDraft,
): Promise<void> {
  await tx.deleteFrom('finding_resources').where('finding_id', '=', findingId).execute();
  const arns = draft.resources.map((r) => r.arn);
  if (!arns.length) return;
  // Measured size, real monthly cost and console link as the inventory has them now.
  const live = await tx
    .selectFrom('resources')
    .select([
      'arn',
      'type',
      'native_id',
      'name',
      'account_id',
      'region',
      'size_value',
      'size_unit',
      'monthly_cost',
      'console_url',
    ])
    .where('tenant_id', '=', tenantId)
    .where('arn', 'in', arns)
    .execute();
  const byArn = new Map(live.map((r) => [r.arn, r]));
  const rows = draft.resources.flatMap((r) => {
    const l = byArn.get(r.arn);
    if (!l) return [];
    return [
      {
        finding_id: findingId,
        tenant_id: tenantId,
        arn: r.arn,
        type: l.type,
        native_id: l.native_id,
        name: l.name,
        account_id: l.account_id,
        region: l.region,
        measured_size: r.measured ? r.measured.value : l.size_value,
        size_unit: r.measured ? r.measured.unit : l.size_unit,
        monthly_cost: l.monthly_cost,
        console_url: l.console_url,
        action_type: r.actionType,
        savings: r.savings,
      },
    ];
  });
  if (rows.length)
    await tx
      .insertInto('finding_resources')
      .values(rows)
      .onConflict((oc) => oc.columns(['finding_id', 'arn']).doNothing())
      .execute();
}

async function insertFinding(
  tx: Db,
  tenantId: string,
  detector: Detector,
  draft: FindingDraft,
  groupId: string,
  status: 'open' | 'confirmed',
  scanId: string | null,
  fingerprint: string,
  steps: AuditStep[],
) {
  const finding = await tx
    .insertInto('findings')
    .values({
      tenant_id: tenantId,
      group_id: groupId,
      check_id: detector.id,
      fingerprint,
      domain: detector.domain,
      title: draft.title,
      severity: draft.severity,
      severity_rank: SEVERITY_RANK[draft.severity],
      status,
      narrative: draft.narrative,
      run_reasoning: draft.reasoning,
      producing_agent: `${DETECTOR_AGENT}:${detector.id}`,
      confidence: draft.confidence,
      estimated_savings: draft.estimatedSavings ?? draft.recommendation.savings,
      scan_id: scanId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await writeResources(tx, tenantId, finding.id, draft);
  await tx
    .insertInto('recommendations')
    .values({
      tenant_id: tenantId,
      finding_id: finding.id,
      rationale: draft.recommendation.rationale,
      action_type: draft.recommendation.actionType,
      savings: draft.recommendation.savings,
      effort: draft.recommendation.effort,
      priority: draft.recommendation.priority,
    })
    .execute();
  await appendSteps(tx, tenantId, finding.id, steps);
  return finding.id;
}

async function refreshGroup(tx: Db, groupId: string): Promise<void> {
  await sql`update finding_groups g set updated_at = now(),
      highest_severity = (select f.severity from findings f where f.group_id = g.id order by f.severity_rank desc limit 1)
    where g.id = ${groupId}`.execute(tx);
}

/**
 * Records one detector's findings for a tenant. A root object seen for the first time opens a finding
 * (or joins a semantically similar active finding's group as `confirmed`: same resources, similar
 * title). Seeing it again adds a `confirmed` sighting to its group (one row, its count and last-seen
 * updated; the open finding stays the one listed). A resolved finding seen again is a regression: it
 * reopens. A dismissed one stays dismissed.
 */
export async function recordFindings(
  db: Db,
  tenantId: string,
  detector: Detector,
  rows: DetectorRow[],
  detectorSteps: AuditStep[],
  scanId: string | null,
  summary: DetectionSummary,
) {
  for (const draft of detector.findings(rows)) {
    summary.findings++;
    const fingerprint = fingerprintOf(detector.id, draft.rootKey);
    const arns = draft.resources.map((r) => r.arn);
    const evidence = arns.length
      ? await runRecorded(
          db,
          tenantId,
          `Evidence for ${draft.title}`,
          evidenceSql(detector, arns),
          DETECTOR_LIMITS,
        )
      : null;
    const steps = [
      ...detectorSteps,
      ...(evidence?.steps ?? []),
      reasoningStep('Why this is a finding', draft.reasoning),
    ];
    await db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`opsi.finding:${tenantId}:${fingerprint}`}, 0))`.execute(
        tx,
      );
      const existingGroup = await tx
        .selectFrom('finding_groups')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('fingerprint', '=', fingerprint)
        .executeTakeFirst();
      if (!existingGroup) {
        // Semantically similar: an active finding of another check in the same domain, on the same resources,
        // with a nearly identical title (a near-duplicate detector). Distinct checks on one resource share the
        // resource's name in their titles, so the bar is high and the domain must match.
        const similar = arns.length
          ? await sql<{ group_id: string }>`
              select f.group_id from findings f
              where f.tenant_id = ${tenantId} and f.status in ${activeFindingStatuses} and f.check_id <> ${detector.id}
                and f.domain = ${detector.domain}
                and similarity(f.title, ${draft.title}) > 0.6
                and (select count(*) from finding_resources fr where fr.finding_id = f.id and fr.arn = any(${arns}::text[])) * 2
                    >= greatest((select count(*) from finding_resources fr where fr.finding_id = f.id), ${arns.length})
              order by similarity(f.title, ${draft.title}) desc limit 1`.execute(tx)
          : { rows: [] };
        const joined = similar.rows[0]?.group_id;
        const groupId =
          joined ??
          (
            await tx
              .insertInto('finding_groups')
              .values({
                tenant_id: tenantId,
                fingerprint,
                check_id: detector.id,
                domain: detector.domain,
                title: draft.title,
                highest_severity: draft.severity,
              })
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id;
        const id = await insertFinding(
          tx,
          tenantId,
          detector,
          draft,
          groupId,
          joined ? 'confirmed' : 'open',
          scanId,
          fingerprint,
          steps,
        );
        await tx
          .insertInto('finding_group_events')
          .values({
            tenant_id: tenantId,
            group_id: groupId,
            finding_id: id,
            kind: joined ? 'clustered' : 'detected',
            agent: `${DETECTOR_AGENT}:${detector.id}`,
            status: joined ? 'confirmed' : 'open',
            detail: JSON.stringify({ scan_id: scanId }),
          })
          .execute();
        if (joined) summary.clustered++;
        else summary.newFindings++;
        await refreshGroup(tx, groupId);
        return;
      }
      const groupId = existingGroup.id;
      const primary = await tx
        .selectFrom('findings')
        .select(['id', 'status'])
        .where('group_id', '=', groupId)
        .where('check_id', '=', detector.id)
        .where('status', '!=', 'confirmed')
        .orderBy('detected_at')
        .executeTakeFirst();
      if (primary?.status === 'resolved') {
        // The issue is back: a regression reopens the finding.
        await tx
          .updateTable('findings')
          .set({
            status: 'open',
            regressed: true,
            resolved_at: null,
            resolved_by: null,
            last_seen_at: new Date(),
            updated_at: new Date(),
            severity: draft.severity,
            severity_rank: SEVERITY_RANK[draft.severity],
          })
          .where('id', '=', primary.id)
          .execute();
        await writeResources(tx, tenantId, primary.id, draft);
        await appendSteps(tx, tenantId, primary.id, steps);
        await tx
          .insertInto('finding_group_events')
          .values({
            tenant_id: tenantId,
            group_id: groupId,
            finding_id: primary.id,
            kind: 'regressed',
            agent: `${DETECTOR_AGENT}:${detector.id}`,
            status: 'open',
            detail: JSON.stringify({ scan_id: scanId }),
          })
          .execute();
        summary.regressed++;
      } else {
        if (primary)
          await tx
            .updateTable('findings')
            .set({ last_seen_at: new Date() })
            .where('id', '=', primary.id)
            .execute();
        const sighting = await tx
          .selectFrom('findings')
          .select('id')
          .where('group_id', '=', groupId)
          .where('check_id', '=', detector.id)
          .where('status', '=', 'confirmed')
          .executeTakeFirst();
        let sightingId: string;
        if (sighting) {
          await tx
            .updateTable('findings')
            .set((eb) => ({
              last_seen_at: new Date(),
              sighting_count: eb('sighting_count', '+', 1),
              scan_id: scanId,
              narrative: draft.narrative,
            }))
            .where('id', '=', sighting.id)
            .execute();
          await writeResources(tx, tenantId, sighting.id, draft);
          sightingId = sighting.id;
        } else {
          sightingId = await insertFinding(
            tx,
            tenantId,
            detector,
            draft,
            groupId,
            'confirmed',
            scanId,
            fingerprint,
            steps,
          );
        }
        await tx
          .insertInto('finding_group_events')
          .values({
            tenant_id: tenantId,
            group_id: groupId,
            finding_id: sightingId,
            kind: 'rediscovered',
            agent: `${DETECTOR_AGENT}:${detector.id}`,
            status: 'confirmed',
            detail: JSON.stringify({ scan_id: scanId, primary_status: primary?.status ?? null }),
          })
          .execute();
        summary.rediscovered++;
      }
      await refreshGroup(tx, groupId);
    });
  }
}

/** Runs detectors over a tenant's current inventory and records what they find. */
export async function runDetectors(
  db: Db,
  tenantId: string,
  detectors: Detector[],
  opts: { scanId?: string | null; limits?: SandboxLimits } = {},
): Promise<DetectionSummary> {
  const summary: DetectionSummary = {
    detectors: detectors.length,
    queries: 0,
    failedQueries: 0,
    findings: 0,
    newFindings: 0,
    rediscovered: 0,
    regressed: 0,
    clustered: 0,
  };
  for (const detector of detectors) {
    const { result, steps } = await runRecorded(
      db,
      tenantId,
      detector.title,
      detector.sql,
      opts.limits ?? DETECTOR_LIMITS,
    );
    summary.queries += steps.length;
    summary.failedQueries += steps.filter((s) => s.status === 'error').length;
    if (!result) continue;
    await recordFindings(
      db,
      tenantId,
      detector,
      result.rows as DetectorRow[],
      steps,
      opts.scanId ?? null,
      summary,
    );
  }
  return summary;
}

export { ACTIVE };
