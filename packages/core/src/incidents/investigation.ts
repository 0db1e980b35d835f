import type { Db } from '@opsi/db';
import type { TimelineLog } from '@opsi/jobs';
import { appendTimelineEvent, getIncident, listTimeline, timelineTransaction } from './incidents';
import { incidentAlerts } from './queries';

/** Writes one investigation event of a run (each kind once per run, however often the job retries). */
export async function recordInvestigationEvent(
  db: Db,
  timeline: TimelineLog | undefined,
  tenantId: string,
  incidentId: string,
  runId: string,
  kind: 'investigation_started' | 'investigation_completed' | 'investigation_failed',
  body: string,
  data: Record<string, unknown> = {},
) {
  return timelineTransaction(db, (tx) =>
    appendTimelineEvent(tx, timeline, tenantId, incidentId, {
      kind,
      body,
      actor: 'agent',
      runId,
      data: { run_id: runId, ...data },
    }),
  );
}

/** What a turn bound to an incident sees: the record, its attached alerts and its latest timeline events. */
export async function incidentTurnContext(db: Db, tenantId: string, incidentId: string) {
  const incident = await getIncident(db, tenantId, incidentId).catch(() => undefined);
  if (!incident) return undefined;
  const [alerts, timeline] = await Promise.all([
    incidentAlerts(db, tenantId, incidentId),
    listTimeline(db, tenantId, incidentId, 0, 1000),
  ]);
  return {
    incident: {
      id: incident.id,
      title: incident.title,
      severity: incident.severity,
      status: incident.status,
      source: incident.source,
      started_at: incident.started_at,
      recurrence_of: incident.recurrence_of,
      resources: incident.resources.map((r) => ({ id: r.id, arn: r.arn, name: r.name, type: r.type })),
    },
    alerts,
    timeline: timeline.slice(-20).map((e) => ({ id: e.id, kind: e.kind, body: e.body, at: e.created_at })),
  };
}

const CITABLE = /\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|arn:aws:[^\s,;)]+)/g;

/** The ids a summary cites (UUIDs and ARNs), in order of first mention. */
export function citedIds(text: string): string[] {
  return [...new Set(text.match(CITABLE) ?? [])].map((s) => s.replace(/[.)]+$/, ''));
}
