import type { Db, ScanWarning } from '@opsi/db';
import { LIFECYCLE_STATUSES, type LifecycleStatus } from '@opsi/contracts';
import { REGION_NOT_ENABLED_CODES } from '@opsi/inventory';
import { DEFAULT_LIMITS, hashRows, runSandboxed, savingsTotal, DETECTORS } from '@opsi/detectors';
import { appendAudit } from '../audit';
import { realizedSavings } from '../plans';
import type { Auth } from '../context';
import { BadRequest, Conflict, NotFound } from '../errors';
import {
  countActiveFindings,
  findAuditStep,
  findAuditSteps,
  findFinding,
  findFindingForUpdate,
  findFindingGroup,
  findFindingResources,
  findFindingsList,
  findGroupEvents,
  findGroupMembers,
  findInventoryCoverage,
  findLastScan,
  findNotifications,
  findRecommendationFinding,
  findRecommendationOfFinding,
  findRecommendations,
  findResolvedFindings,
  insertGroupEvent,
  markNotificationsRead,
  updateFindingStatus,
  type FindingListQuery,
} from './repository';

export type FindingFilters = FindingListQuery;

/** The findings list: clustered duplicates (`confirmed`) are hidden unless asked for by status. */
export function listFindings(db: Db, tenantId: string, f: FindingFilters) {
  return findFindingsList(db, tenantId, f);
}

async function ownFinding(db: Db, tenantId: string, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new NotFound('No such finding.');
  const finding = await findFinding(db, tenantId, id);
  if (!finding) throw new NotFound('No such finding.');
  return finding;
}

/** The audit steps of a finding in order, with the contract's summary. */
export async function getAuditTrail(db: Db, tenantId: string, findingId: string) {
  await ownFinding(db, tenantId, findingId);
  const steps = await findAuditSteps(db, tenantId, findingId);
  const queries = steps.filter((s) => s.step_kind === 'query');
  return {
    finding_id: findingId,
    steps,
    summary: {
      total_steps: steps.length,
      total_queries: queries.length,
      failures: steps.filter((s) => s.status === 'error').length,
      self_corrections: steps.filter((s) => s.is_self_correction).length,
    },
  };
}

/** One finding with its resources, recommendation, group history and audit trail. */
export async function getFinding(db: Db, tenantId: string, id: string) {
  const f = await ownFinding(db, tenantId, id);
  const [resources, recommendation, group, history, audit] = await Promise.all([
    findFindingResources(db, id),
    findRecommendationOfFinding(db, id),
    findFindingGroup(db, f.group_id),
    findGroupEvents(db, f.group_id),
    getAuditTrail(db, tenantId, id),
  ]);
  const members = await findGroupMembers(db, f.group_id);
  return {
    id: f.id,
    title: f.title,
    severity: f.severity,
    domain: f.domain,
    status: f.status,
    check_id: f.check_id,
    narrative: f.narrative,
    run_reasoning: f.run_reasoning,
    producing_agent: f.producing_agent,
    confidence: f.confidence,
    detected_at: f.detected_at,
    last_seen_at: f.last_seen_at,
    last_reinvestigated_at: f.last_reinvestigated_at,
    resolved_at: f.resolved_at,
    resolved_by: f.resolved_by,
    regressed: f.regressed,
    resources,
    recommendation: recommendation ?? null,
    group: {
      id: group.id,
      highest_severity: group.highest_severity,
      members,
      history: history.map((h) => ({
        finding_id: h.finding_id,
        kind: h.kind,
        agent: h.agent,
        status: h.status,
        at: h.at,
      })),
    },
    audit: { steps: audit.steps, summary: audit.summary },
  };
}

/**
 * Re-runs one recorded query step live, in the sandbox (read-only role, read-only transaction,
 * statement timeout, byte cap, row-level security on the caller's tenant), and says whether the result
 * differs from the recorded one. A step that is not rerunnable is refused (409).
 */
export async function rerunAuditStep(db: Db, tenantId: string, findingId: string, seq: number) {
  await ownFinding(db, tenantId, findingId);
  const step = await findAuditStep(db, tenantId, findingId, seq);
  if (!step) throw new NotFound('No such audit step.');
  if (!step.rerunnable || !step.query_sql)
    throw new Conflict(`Step ${seq} is a ${step.step_kind} step and cannot be re-run.`);
  const result = await runSandboxed(db, tenantId, step.query_sql, DEFAULT_LIMITS).catch((e: Error) => {
    throw new BadRequest(`The query failed: ${e.message}`);
  });
  return {
    seq,
    rows: result.rows,
    row_count: result.rowCount,
    duration_ms: result.durationMs,
    truncated: result.truncated,
    differs: result.resultHash !== step.result_hash,
    recorded_row_count: step.row_count,
    executed_at: new Date(),
  };
}

/** Sets a finding's lifecycle status from any status; recorded in the audit log and the group history. */
export async function setFindingStatus(db: Db, auth: Auth, findingId: string, status: string) {
  if (!(LIFECYCLE_STATUSES as readonly string[]).includes(status)) {
    throw new BadRequest(
      `status must be one of ${LIFECYCLE_STATUSES.join(', ')} (confirmed is set only by clustering)`,
    );
  }
  await db.transaction().execute(async (tx) => {
    const f = await findFindingForUpdate(tx, auth.tenant.id, findingId);
    if (!f) throw new NotFound('No such finding.');
    const resolved = status === 'resolved';
    await updateFindingStatus(
      tx,
      f.id,
      status as LifecycleStatus,
      resolved ? `user:${auth.user.email}` : null,
    );
    await insertGroupEvent(tx, {
      tenant_id: auth.tenant.id,
      group_id: f.group_id,
      finding_id: f.id,
      kind: 'status_changed',
      agent: `user:${auth.user.email}`,
      status,
      detail: JSON.stringify({ from: f.status }),
    });
    await appendAudit(tx, auth.tenant.id, {
      actor: {
        type: 'user',
        id: auth.user.id,
        email: auth.user.email,
        token_id: auth.kind === 'token' ? auth.token.id : null,
      },
      action: 'finding.status_changed',
      target_type: 'finding',
      target_id: f.id,
      details: { from: f.status, to: status, title: f.title },
    });
  });
  return { success: true as const };
}

/** Recommendations of the active findings, most urgent first. */
export function listRecommendations(db: Db, tenantId: string) {
  return findRecommendations(db, tenantId);
}

/** The finding a recommendation belongs to (for reinvestigating a recommendation). */
export async function findingOfRecommendation(db: Db, tenantId: string, recommendationId: string) {
  if (!/^[0-9a-f-]{36}$/i.test(recommendationId)) throw new NotFound('No such recommendation.');
  const r = await findRecommendationFinding(db, tenantId, recommendationId);
  if (!r) throw new NotFound('No such recommendation.');
  return r.finding_id;
}

export const DOMAINS = ['finops', 'security', 'sre'] as const;

/** Resolved clusters with who resolved them and the evidence of the last check. */
export async function listResolved(db: Db, tenantId: string, domain?: string) {
  if (domain !== undefined && !(DOMAINS as readonly string[]).includes(domain))
    throw new BadRequest(`domain must be one of ${DOMAINS.join(', ')}`);
  return findResolvedFindings(db, tenantId, domain);
}

/** The tenant's summary: open findings, savings at stake, and what the inventory covers. */
export async function pulseOverview(db: Db, tenantId: string) {
  const counts = await countActiveFindings(db, tenantId);
  const byDomain: Record<string, number> = { finops: 0, security: 0, sre: 0 };
  const bySeverity: Record<string, number> = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
  let open = 0;
  for (const c of counts) {
    byDomain[c.domain] = (byDomain[c.domain] ?? 0) + c.n;
    bySeverity[c.severity] = (bySeverity[c.severity] ?? 0) + c.n;
    open += c.n;
  }
  const coverage = await findInventoryCoverage(db, tenantId);
  const lastScan = await findLastScan(db, tenantId);
  return {
    open_findings: open,
    by_domain: byDomain,
    by_severity: bySeverity,
    estimated_savings: await savingsTotal(db, tenantId),
    realized_savings: await realizedSavings(db, tenantId),
    coverage: {
      ...coverage,
      detectors: DETECTORS.length,
      last_scan: lastScan
        ? { ...lastScan, missing_permissions: missingPermissions(lastScan.warnings) }
        : null,
    },
  };
}

export function listNotifications(
  db: Db,
  tenantId: string,
  opts: { unread?: boolean | undefined; limit: number },
) {
  return findNotifications(db, tenantId, opts);
}

export async function markAllNotificationsRead(db: Db, tenantId: string) {
  const result = await markNotificationsRead(db, tenantId);
  return { success: true as const, marked: Number(result.numUpdatedRows) };
}

export { hashRows };

/** The refused IAM actions of a scan's warnings (a region not enabled is no missing permission). */
function missingPermissions(warnings: ScanWarning[]): string[] {
  const refused = warnings.filter((w) => !REGION_NOT_ENABLED_CODES.includes(w.code)).map((w) => w.action);
  return [...new Set(refused)].sort();
}
