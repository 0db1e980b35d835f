import { type Db } from '@opsi/db';
import { findPeriodIncidents, findRealizedSavings, findTableName } from './repository';

/** A report's period: (from, to]. */
export interface Period {
  from: Date;
  to: Date;
}

/**
 * Tables of other areas this module reads before their code is on this branch. Checked once per process
 * and name: a table that exists stays (migrations only add), a missing one is asked again next time.
 */
const present = new Set<string>();
async function hasTable(db: Db, name: 'realized_savings' | 'incidents'): Promise<boolean> {
  if (present.has(name)) return true;
  if (await findTableName(db, name)) present.add(name);
  return present.has(name);
}

export interface RealizedSavings {
  /** Monthly savings realized by resolution plans whose final check closed a cluster in the period. */
  monthly: number;
  items: Array<{ plan_id: string; finding_id: string; group_id: string; monthly: number }>;
}

/**
 * Savings realized in the period: the `realized_savings` rows resolution plans (issue 12) write when a
 * final check closes a cluster. Zero until that table exists. The one place the report reads them from.
 */
export async function realizedSavingsInPeriod(db: Db, tenantId: string, p: Period): Promise<RealizedSavings> {
  if (!(await hasTable(db, 'realized_savings'))) return { monthly: 0, items: [] };
  const rows = await findRealizedSavings(db, tenantId, p);
  const monthly = Math.round(rows.rows.reduce((s, r) => s + r.monthly, 0) * 100) / 100;
  return { monthly, items: rows.rows };
}

export interface ReportIncident {
  incident_id: string;
  title: string;
  severity: string;
  status: string;
  created_at: string;
  resolved_at: string | null;
}

export interface IncidentSections {
  opened: ReportIncident[];
  resolved: ReportIncident[];
  open: ReportIncident[];
}

const iso = (d: unknown) => (d === null || d === undefined ? null : new Date(d as string).toISOString());

/**
 * Incidents (issue 13) opened and resolved in the period, and those not resolved at its end. Empty lists
 * until the incidents table exists. The one place the report reads incidents from.
 */
export async function incidentsInPeriod(db: Db, tenantId: string, p: Period): Promise<IncidentSections> {
  if (!(await hasTable(db, 'incidents'))) return { opened: [], resolved: [], open: [] };
  const rows = await findPeriodIncidents(db, tenantId, p);
  const item = (r: (typeof rows.rows)[number]): ReportIncident => ({
    incident_id: r.id,
    title: r.title,
    severity: r.severity,
    status: r.status,
    created_at: iso(r.created_at)!,
    resolved_at: iso(r.resolved_at),
  });
  const within = (d: Date | null) => d !== null && d > p.from && d <= p.to;
  return {
    opened: rows.rows.filter((r) => within(r.created_at)).map(item),
    resolved: rows.rows.filter((r) => r.status === 'resolved' && within(r.resolved_at)).map(item),
    open: rows.rows.filter((r) => r.status !== 'resolved').map(item),
  };
}
