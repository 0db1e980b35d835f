import { activeFindingStatuses, sql, type Db, type FindingStatus, type ScanWarning } from '@opsi/db';
import { LIFECYCLE_STATUSES, type LifecycleStatus } from '@opsi/contracts';
import { REGION_NOT_ENABLED_CODES } from '@opsi/inventory';
import { DEFAULT_LIMITS, hashRows, runSandboxed, savingsTotal, DETECTORS } from '@opsi/detectors';
import { appendAudit } from '../audit';
import { realizedSavings } from '../plans';
import type { Auth } from '../context';
import { BadRequest, Conflict, NotFound } from '../errors';

const STATUS_ORDER =
  "case f.status when 'open' then 1 when 'acknowledged' then 2 when 'in_progress' then 3 when 'resolved' then 4 when 'dismissed' then 5 else 6 end";
const EFFORT_ORDER = "case r.effort when 'low' then 1 when 'medium' then 2 else 3 end";

export interface FindingFilters {
  status?: FindingStatus | undefined;
  severity?: string | undefined;
  domain?: string | undefined;
  sortBy: 'severity' | 'date' | 'savings' | 'effort' | 'status';
  sortDir: 'asc' | 'desc';
  limit?: number;
}

/** The findings list: clustered duplicates (`confirmed`) are hidden unless asked for by status. */
export async function listFindings(db: Db, tenantId: string, f: FindingFilters) {
  const order = {
    severity: sql.raw('f.severity_rank'),
    date: sql.raw('f.detected_at'),
    savings: sql.raw('coalesce(r.savings, 0)'),
    effort: sql.raw(EFFORT_ORDER),
    status: sql.raw(STATUS_ORDER),
  }[f.sortBy];
  const dir = sql.raw(f.sortDir === 'asc' ? 'asc' : 'desc');
  const rows = await sql<Record<string, unknown>>`
    select f.id, f.title, f.severity, f.domain, f.status, f.check_id, f.group_id, f.regressed,
           coalesce(r.savings, 0)::float8 as savings, r.effort, f.detected_at, f.last_seen_at,
           (select count(*)::int from finding_resources fr where fr.finding_id = f.id) as resource_count
    from findings f left join recommendations r on r.finding_id = f.id
    where f.tenant_id = ${tenantId}
      and ${f.status ? sql`f.status = ${f.status}` : sql`f.status <> 'confirmed'`}
      and ${f.severity ? sql`f.severity = ${f.severity}` : sql`true`}
      and ${f.domain ? sql`f.domain = ${f.domain}` : sql`true`}
    order by ${order} ${dir}, f.severity_rank desc, f.detected_at desc, f.id
    limit ${f.limit ?? 1000}`.execute(db);
  return rows.rows;
}

async function ownFinding(db: Db, tenantId: string, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new NotFound('No such finding.');
  const finding = await db
    .selectFrom('findings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!finding) throw new NotFound('No such finding.');
  return finding;
}

/** The audit steps of a finding in order, with the contract's summary. */
export async function getAuditTrail(db: Db, tenantId: string, findingId: string) {
  await ownFinding(db, tenantId, findingId);
  const steps = await db
    .selectFrom('finding_audit_steps')
    .select([
      'seq',
      'step_kind',
      'tool_name',
      'title',
      'query_sql',
      'status',
      'error_message',
      'result_preview',
      'row_count',
      'duration_ms',
      'is_self_correction',
      'rerunnable',
      'executed_at',
    ])
    .where('tenant_id', '=', tenantId)
    .where('finding_id', '=', findingId)
    .orderBy('seq')
    .execute();
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
    db
      .selectFrom('finding_resources')
      .select([
        'arn',
        'type',
        'native_id',
        'name',
        'account_id',
        'region',
        'measured_size',
        'size_unit',
        'monthly_cost',
        'console_url',
        'action_type',
        'savings',
      ])
      .where('finding_id', '=', id)
      .orderBy('arn')
      .execute(),
    db
      .selectFrom('recommendations')
      .select(['id', 'rationale', 'action_type', 'savings', 'effort', 'priority'])
      .where('finding_id', '=', id)
      .executeTakeFirst(),
    db
      .selectFrom('finding_groups')
      .select(['id', 'fingerprint', 'highest_severity', 'created_at'])
      .where('id', '=', f.group_id)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('finding_group_events as e')
      .leftJoin('findings as g', 'g.id', 'e.finding_id')
      .select([
        'e.finding_id',
        'e.kind',
        'e.agent',
        'e.status',
        'e.at',
        'g.title',
        'g.sighting_count',
        'g.last_seen_at',
      ])
      .where('e.group_id', '=', f.group_id)
      .orderBy('e.at')
      .orderBy('e.id')
      .execute(),
    getAuditTrail(db, tenantId, id),
  ]);
  const members = await db
    .selectFrom('findings')
    .select(['id', 'status', 'producing_agent', 'detected_at', 'last_seen_at', 'sighting_count'])
    .where('group_id', '=', f.group_id)
    .orderBy('detected_at')
    .execute();
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
  const step = await db
    .selectFrom('finding_audit_steps')
    .select(['seq', 'query_sql', 'rerunnable', 'result_hash', 'row_count', 'step_kind'])
    .where('tenant_id', '=', tenantId)
    .where('finding_id', '=', findingId)
    .where('seq', '=', seq)
    .executeTakeFirst();
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
    const f = await tx
      .selectFrom('findings')
      .select(['id', 'status', 'group_id', 'title'])
      .where('tenant_id', '=', auth.tenant.id)
      .where('id', '=', findingId)
      .forUpdate()
      .executeTakeFirst();
    if (!f) throw new NotFound('No such finding.');
    const resolved = status === 'resolved';
    await tx
      .updateTable('findings')
      .set({
        status: status as LifecycleStatus,
        updated_at: new Date(),
        resolved_at: resolved ? new Date() : null,
        resolved_by: resolved ? `user:${auth.user.email}` : null,
      })
      .where('id', '=', f.id)
      .execute();
    await tx
      .insertInto('finding_group_events')
      .values({
        tenant_id: auth.tenant.id,
        group_id: f.group_id,
        finding_id: f.id,
        kind: 'status_changed',
        agent: `user:${auth.user.email}`,
        status,
        detail: JSON.stringify({ from: f.status }),
      })
      .execute();
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
export async function listRecommendations(db: Db, tenantId: string) {
  const rows = await sql<Record<string, unknown>>`
    select r.id, r.finding_id, f.title, f.domain, f.severity, f.status, r.rationale, r.action_type,
           r.savings::float8 as savings, r.effort, r.priority
    from recommendations r join findings f on f.id = r.finding_id
    where r.tenant_id = ${tenantId} and f.status in ${activeFindingStatuses}
    order by r.priority, r.savings desc, f.severity_rank desc, r.id`.execute(db);
  return rows.rows;
}

/** The finding a recommendation belongs to (for reinvestigating a recommendation). */
export async function findingOfRecommendation(db: Db, tenantId: string, recommendationId: string) {
  if (!/^[0-9a-f-]{36}$/i.test(recommendationId)) throw new NotFound('No such recommendation.');
  const r = await db
    .selectFrom('recommendations')
    .select('finding_id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', recommendationId)
    .executeTakeFirst();
  if (!r) throw new NotFound('No such recommendation.');
  return r.finding_id;
}

export const DOMAINS = ['finops', 'security', 'sre'] as const;

/** Resolved clusters with who resolved them and the evidence of the last check. */
export async function listResolved(db: Db, tenantId: string, domain?: string) {
  if (domain !== undefined && !(DOMAINS as readonly string[]).includes(domain))
    throw new BadRequest(`domain must be one of ${DOMAINS.join(', ')}`);
  const rows = await sql<Record<string, unknown>>`
    select f.group_id, f.id as finding_id, f.title, f.domain, f.severity, f.check_id, f.resolved_at, f.resolved_by,
           coalesce(r.savings, 0)::float8 as savings,
           (select json_build_object('seq', s.seq, 'title', s.title, 'query_sql', s.query_sql, 'row_count', s.row_count, 'executed_at', s.executed_at)
              from finding_audit_steps s where s.finding_id = f.id and s.step_kind = 'query' order by s.seq desc limit 1) as evidence
    from findings f left join recommendations r on r.finding_id = f.id
    where f.tenant_id = ${tenantId} and f.status = 'resolved' ${domain ? sql`and f.domain = ${domain}` : sql``}
    order by f.resolved_at desc nulls last, f.id`.execute(db);
  return rows.rows;
}

/** The tenant's summary: open findings, savings at stake, and what the inventory covers. */
export async function pulseOverview(db: Db, tenantId: string) {
  const counts = await sql<{ domain: string; severity: string; n: number }>`
    select domain, severity, count(*)::int as n from findings
    where tenant_id = ${tenantId} and status in ${activeFindingStatuses} group by 1, 2`.execute(db);
  const byDomain: Record<string, number> = { finops: 0, security: 0, sre: 0 };
  const bySeverity: Record<string, number> = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
  let open = 0;
  for (const c of counts.rows) {
    byDomain[c.domain] = (byDomain[c.domain] ?? 0) + c.n;
    bySeverity[c.severity] = (bySeverity[c.severity] ?? 0) + c.n;
    open += c.n;
  }
  const coverage = await sql<{ resources: number; types: number; accounts: number; regions: number }>`
    select count(*)::int as resources, count(distinct type)::int as types, count(distinct account_id)::int as accounts,
           count(distinct region) filter (where region <> 'global')::int as regions
    from resources where tenant_id = ${tenantId} and deleted_at is null`.execute(db);
  const lastScan = await db
    .selectFrom('inventory_scans')
    .select(['id', 'status', 'finished_at', 'created_at', 'partial', 'warnings'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return {
    open_findings: open,
    by_domain: byDomain,
    by_severity: bySeverity,
    estimated_savings: await savingsTotal(db, tenantId),
    realized_savings: await realizedSavings(db, tenantId),
    coverage: {
      ...coverage.rows[0]!,
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
  let q = db
    .selectFrom('notifications')
    .select(['id', 'kind', 'title', 'body', 'finding_id', 'report_id', 'created_at', 'read_at'])
    .where('tenant_id', '=', tenantId);
  if (opts.unread === true) q = q.where('read_at', 'is', null);
  if (opts.unread === false) q = q.where('read_at', 'is not', null);
  return q.orderBy('created_at', 'desc').orderBy('id').limit(opts.limit).execute();
}

export async function markAllNotificationsRead(db: Db, tenantId: string) {
  const result = await db
    .updateTable('notifications')
    .set({ read_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return { success: true as const, marked: Number(result.numUpdatedRows) };
}

export { hashRows };

/** The refused IAM actions of a scan's warnings (a region not enabled is no missing permission). */
function missingPermissions(warnings: ScanWarning[]): string[] {
  const refused = warnings.filter((w) => !REGION_NOT_ENABLED_CODES.includes(w.code)).map((w) => w.action);
  return [...new Set(refused)].sort();
}
