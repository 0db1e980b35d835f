import type { Db } from '@opsi/db';

/** A report's period: (from, to]. */
export interface Period {
  from: Date;
  to: Date;
}

export interface RealizedSavings {
  /** Monthly savings realized by resolution plans whose final check closed a cluster in the period. */
  monthly: number;
  items: Array<{ plan_id: string; finding_id: string; group_id: string; monthly: number }>;
}

/**
 * Savings realized in the period, from resolution plans (issue 12). Plans do not record realized savings
 * yet on this branch, so this answers zero; it is the one place the morning report reads them from.
 */
export async function realizedSavingsInPeriod(
  _db: Db,
  _tenantId: string,
  _p: Period,
): Promise<RealizedSavings> {
  return { monthly: 0, items: [] };
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

/**
 * Incidents opened and resolved in the period, and those still open at its end (issue 13). The
 * incidents table does not exist yet on this branch, so this answers empty lists; it is the one place
 * the morning report reads incidents from.
 */
export async function incidentsInPeriod(_db: Db, _tenantId: string, _p: Period): Promise<IncidentSections> {
  return { opened: [], resolved: [], open: [] };
}

/**
 * What a notifier says about an incident opened by triage (issue 13). No incidents table on this branch
 * yet: undefined, and a delivery for it is recorded failed rather than sent empty.
 */
export async function incidentForNotification(
  _db: Db,
  _tenantId: string,
  _incidentId: string,
): Promise<Record<string, unknown> | undefined> {
  return undefined;
}
