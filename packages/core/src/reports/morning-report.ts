import { type Db } from '@opsi/db';
import { savingsTotal } from '@opsi/detectors';
import { NotFound } from '../errors';
import {
  countDriftChanges,
  findDetectedFindings,
  findDriftChanges,
  findLatestMorningReport,
  findMorningReportByEnd,
  findMorningReportByStart,
  findMorningReports,
  findPreviousReportEnd,
  findRegressedFindings,
  findResolvedFindings,
  findTopClusters,
  insertMorningReport,
  insertReportNotification,
  type ReportRow,
} from './repository';
import { incidentsInPeriod, realizedSavingsInPeriod, type IncidentSections, type Period } from './sources';

/** Most items a drift list carries; `totals` always counts them all. */
export const DRIFT_LIST_LIMIT = 100;
/** How many clusters the report puts first. */
export const TOP_CLUSTERS = 3;
const DAY_MS = 86_400_000;

export interface ReportFinding {
  finding_id: string;
  group_id: string;
  title: string;
  severity: string;
  domain: string;
  check_id: string;
  status: string;
  at: string;
}

export interface DriftItem {
  resource_id: string | null;
  arn: string;
  native_id: string | null;
  type: string;
  name: string | null;
  at: string;
  actor: string | null;
  fields?: string[];
}

export interface TopCluster {
  group_id: string;
  finding_id: string;
  title: string;
  severity: string;
  domain: string;
  check_id: string;
  resources: number;
  duplicates: number;
  savings_monthly: number;
  regressed: boolean;
  why: string;
}

export interface ReportSections {
  new_findings: ReportFinding[];
  resolved_findings: Array<ReportFinding & { resolved_by: string | null; savings_monthly: number }>;
  regressed_findings: ReportFinding[];
  savings: {
    open_monthly: number;
    realized_monthly: number;
    resolved_estimated_monthly: number;
    realized: Array<{ plan_id: string; finding_id: string; group_id: string; monthly: number }>;
  };
  drift: {
    added: DriftItem[];
    removed: DriftItem[];
    changed: DriftItem[];
    totals: { added: number; removed: number; changed: number };
  };
  incidents: IncidentSections;
  top_clusters: TopCluster[];
}

export interface MorningReport {
  id: string;
  generated_at: Date;
  period: { from: Date; to: Date };
  requested_by: string;
  headline: string;
  sections: ReportSections;
}

const iso = (d: unknown) => (d instanceof Date ? d : new Date(String(d))).toISOString();
const money = (n: number) => `$${n.toFixed(2)}`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

async function findingsDetected(db: Db, tenantId: string, p: Period): Promise<ReportFinding[]> {
  const rows = await findDetectedFindings(db, tenantId, p);
  return rows.rows.map((r) => ({ ...r, at: iso(r.at) }));
}

async function findingsResolved(db: Db, tenantId: string, p: Period) {
  const rows = await findResolvedFindings(db, tenantId, p);
  return rows.rows.map((r) => ({ ...r, at: iso(r.at) }));
}

async function findingsRegressed(db: Db, tenantId: string, p: Period): Promise<ReportFinding[]> {
  const rows = await findRegressedFindings(db, tenantId, p);
  return rows.rows.map((r) => ({ ...r, at: iso(r.at) }));
}

/**
 * What the inventory saw change in the period: history rows of snapshots taken in it (the time a scan
 * recorded them, so a demo's simulated clock and a real account read the same way), except a
 * connection's first snapshot, which is its baseline rather than drift. The actor is the principal of
 * the latest CloudTrail event naming the resource between the previous observation and this one (a
 * minute of slack each side: CloudTrail stamps the call, the scan comes after).
 */
async function drift(db: Db, tenantId: string, p: Period): Promise<ReportSections['drift']> {
  const rows = await findDriftChanges(db, tenantId, p, DRIFT_LIST_LIMIT);
  const totals = await countDriftChanges(db, tenantId, p);
  const count = (c: string) => totals.rows.find((t) => t.change === c)?.n ?? 0;
  const item = (r: (typeof rows.rows)[number], withFields: boolean): DriftItem => ({
    resource_id: r.resource_id,
    arn: r.arn,
    native_id: r.native_id,
    type: r.type,
    name: r.name,
    at: iso(r.at),
    actor: r.actor,
    ...(withFields ? { fields: r.changed_fields } : {}),
  });
  return {
    added: rows.rows.filter((r) => r.change === 'created').map((r) => item(r, false)),
    removed: rows.rows.filter((r) => r.change === 'deleted').map((r) => item(r, false)),
    changed: rows.rows.filter((r) => r.change === 'updated').map((r) => item(r, true)),
    totals: { added: count('created'), removed: count('deleted'), changed: count('updated') },
  };
}

/**
 * The clusters to fix first: active duplicate groups by severity, then regressions, then savings, then
 * how many resources they cover; each with the reason it ranks where it does.
 */
export async function topClusters(db: Db, tenantId: string, limit = TOP_CLUSTERS): Promise<TopCluster[]> {
  const rows = await findTopClusters(db, tenantId, limit);
  return rows.rows.map(({ detected_at: _d, ...r }) => ({
    ...r,
    why: [
      `${r.severity} ${r.domain} issue on ${plural(r.resources, 'resource')}`,
      r.regressed ? 'it came back after it was resolved' : null,
      r.savings_monthly > 0 ? `fixing it saves ${money(r.savings_monthly)}/month` : null,
      r.duplicates > 0
        ? `${plural(r.duplicates, 'near-duplicate finding')} of other checks clustered into it`
        : null,
    ]
      .filter(Boolean)
      .join('; '),
  }));
}

function headlineOf(s: ReportSections): string {
  const critical = s.new_findings.filter((f) => f.severity === 'critical').length;
  const drift = s.drift.totals.added + s.drift.totals.removed + s.drift.totals.changed;
  const parts = [
    `${plural(s.new_findings.length, 'new finding')}${critical ? ` (${critical} critical)` : ''}`,
    `${s.resolved_findings.length} resolved`,
    `${s.regressed_findings.length} regressed`,
    `${plural(drift, 'change')} in the inventory`,
    `${plural(s.incidents.opened.length, 'incident')} opened`,
    `${money(s.savings.open_monthly)}/month of savings open`,
  ];
  const top = s.top_clusters[0];
  return `${parts.join(', ')}.${top ? ` Fix first: ${top.title} (${top.severity}).` : ''}`;
}

/** Computes a report's sections over a period, reading each section from its own source. */
export async function computeReport(db: Db, tenantId: string, p: Period) {
  const [newFindings, resolved, regressed, open, realized, driftSection, incidents, top] = await Promise.all([
    findingsDetected(db, tenantId, p),
    findingsResolved(db, tenantId, p),
    findingsRegressed(db, tenantId, p),
    savingsTotal(db, tenantId),
    realizedSavingsInPeriod(db, tenantId, p),
    drift(db, tenantId, p),
    incidentsInPeriod(db, tenantId, p),
    topClusters(db, tenantId),
  ]);
  const sections: ReportSections = {
    new_findings: newFindings,
    resolved_findings: resolved,
    regressed_findings: regressed,
    savings: {
      open_monthly: open.monthly,
      realized_monthly: realized.monthly,
      resolved_estimated_monthly:
        Math.round(resolved.reduce((sum, f) => sum + f.savings_monthly, 0) * 100) / 100,
      realized: realized.items,
    },
    drift: driftSection,
    incidents,
    top_clusters: top,
  };
  return { headline: headlineOf(sections), sections };
}

function toReport(r: ReportRow): MorningReport {
  return {
    id: r.id,
    generated_at: r.generated_at,
    period: { from: r.period_from, to: r.period_to },
    requested_by: r.requested_by,
    headline: r.headline,
    sections: r.sections as unknown as ReportSections,
  };
}

/**
 * Writes the tenant's report for the period ending at `periodTo`, starting where the previous report
 * ended (the first covers the 24 hours before). Idempotent per tenant and period: a report for that end
 * already written is returned as it is (a retried job), and of two generations racing from the same
 * previous report only one writes (unique period ends); the other returns the one written. The report's
 * notification is written in the same transaction.
 */
export async function generateMorningReport(
  db: Db,
  tenantId: string,
  opts: { periodTo: Date; requestedBy: string },
): Promise<{ report: MorningReport; created: boolean }> {
  const byEnd = () => findMorningReportByEnd(db, tenantId, opts.periodTo);
  const existing = await byEnd();
  if (existing) return { report: toReport(existing), created: false };
  const previous = await findPreviousReportEnd(db, tenantId, opts.periodTo);
  const from = previous?.period_to ?? new Date(opts.periodTo.getTime() - DAY_MS);
  const { headline, sections } = await computeReport(db, tenantId, { from, to: opts.periodTo });
  const written = await db.transaction().execute(async (tx) => {
    const row = await insertMorningReport(tx, {
      tenant_id: tenantId,
      period_from: from,
      period_to: opts.periodTo,
      requested_by: opts.requestedBy,
      headline,
      sections: JSON.stringify(sections),
    });
    if (!row) return undefined;
    await insertReportNotification(tx, tenantId, headline, row.id);
    return row;
  });
  if (written) return { report: toReport(written), created: true };
  const raced = (await byEnd()) ?? (await findMorningReportByStart(db, tenantId, from));
  return { report: toReport(raced), created: false };
}

/** The tenant's newest report; 404 before the first. */
export async function latestMorningReport(db: Db, tenantId: string): Promise<MorningReport> {
  const row = await findLatestMorningReport(db, tenantId);
  if (!row)
    throw new NotFound('No morning report yet: the first is written at 07:00 local time, or on request.');
  return toReport(row);
}

/** The tenant's reports, newest first. */
export async function listMorningReports(db: Db, tenantId: string, limit: number): Promise<MorningReport[]> {
  const rows = await findMorningReports(db, tenantId, limit);
  return rows.map(toReport);
}
