import { z } from 'zod';
import { defineTool } from '../define-tool';
import type { Db } from '@opsi/db';
import { getIncident, listTimeline } from './incidents';
import { incidentAlerts, relatedResources } from './queries';
import {
  findActiveFindingsOn,
  findCloudTrailEventsOn,
  findDailyMetrics,
  findIncidentsForTool,
  findResourceHistoryOf,
  findResourceNames,
  findSimilarIncidents,
} from './repository';

const IncidentRef = z.object({ id: z.string().uuid().describe("The incident's id (a UUID)") });

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);

async function incidentOrMissing(db: Db, tenantId: string, id: string) {
  try {
    return await getIncident(db, tenantId, id);
  } catch {
    return undefined;
  }
}

const list_incidents = defineTool({
  name: 'list_incidents',
  description:
    'List incidents, newest first: filter by status (open, investigating, mitigated, resolved, or active = not resolved) and severity (SEV1..SEV4).',
  input: z.object({
    status: z.enum(['open', 'investigating', 'mitigated', 'resolved', 'active']).optional(),
    severity: z.enum(['SEV1', 'SEV2', 'SEV3', 'SEV4']).optional(),
    limit: z.number().int().min(1).max(50).default(10),
  }),
  async execute(i, { db, tenantId }) {
    const { total, rows } = await findIncidentsForTool(db, tenantId, i);
    return {
      total: total.n,
      incidents: rows.map((r) => ({
        ...r,
        started_at: iso(r.started_at),
        created_at: iso(r.created_at),
        resolved_at: iso(r.resolved_at),
      })),
    };
  },
});

const get_incident = defineTool({
  name: 'get_incident',
  description:
    'One incident: title, severity, status, the affected resources, the alerts attached (with counts), the war room, and the past incident it recurs.',
  input: IncidentRef,
  async execute(i, { db, tenantId }) {
    const incident = await incidentOrMissing(db, tenantId, i.id);
    if (!incident) return { found: false, id: i.id };
    const [alerts, past] = await Promise.all([
      incidentAlerts(db, tenantId, i.id),
      incident.recurrence_of ? incidentOrMissing(db, tenantId, incident.recurrence_of) : undefined,
    ]);
    return {
      found: true,
      id: incident.id,
      title: incident.title,
      severity: incident.severity,
      status: incident.status,
      source: incident.source,
      description: incident.description,
      started_at: iso(incident.started_at),
      resolved_at: iso(incident.resolved_at),
      resources: incident.resources.map((r) => ({
        id: r.id,
        arn: r.arn,
        native_id: r.native_id,
        name: r.name,
        type: r.type,
      })),
      alerts: alerts.map((a) => ({
        id: Number(a.id),
        title: a.title,
        severity: a.severity,
        fingerprint: a.fingerprint,
        count: a.count,
        arn: a.arn,
        first_at: iso(a.first_at),
        last_at: iso(a.last_at),
        action: a.action,
      })),
      recurrence_of: past
        ? {
            id: past.id,
            title: past.title,
            started_at: iso(past.started_at),
            resolved_at: iso(past.resolved_at),
          }
        : null,
      war_room: incident.war_room,
    };
  },
});

const incident_timeline = defineTool({
  name: 'incident_timeline',
  description:
    "An incident's timeline, oldest first (created, alerts attached, status changes, notes, investigations).",
  input: IncidentRef.extend({ after_id: z.number().int().min(0).default(0) }),
  async execute(i, { db, tenantId }) {
    const incident = await incidentOrMissing(db, tenantId, i.id);
    if (!incident) return { found: false, id: i.id };
    const events = await listTimeline(db, tenantId, i.id, i.after_id, 200);
    return { found: true, id: i.id, events: events.map(({ data: _d, ...e }) => e) };
  },
});

const incident_related_resources = defineTool({
  name: 'incident_related_resources',
  description:
    "The incident's affected resources with what each depends on (dependencies) and what depends on it (dependents), one hop away.",
  input: IncidentRef,
  async execute(i, { db, tenantId }) {
    const incident = await incidentOrMissing(db, tenantId, i.id);
    if (!incident) return { found: false, id: i.id };
    const out = [];
    for (const r of incident.resources.slice(0, 10)) {
      const related = await relatedResources(db, tenantId, r.arn, { depth: 1 });
      const names = await findResourceNames(db, tenantId, related.length ? related.map((x) => x.arn) : ['']);
      const named = (x: (typeof related)[number]) => {
        const n = names.find((m) => m.arn === x.arn);
        return { arn: x.arn, name: n?.name ?? null, type: n?.type ?? null, edge: x.via[0] ?? null };
      };
      out.push({
        arn: r.arn,
        name: r.name,
        dependencies: related
          .filter((x) => x.direction !== 'dependent')
          .map(named)
          .slice(0, 25),
        dependents: related
          .filter((x) => x.direction !== 'dependency')
          .map(named)
          .slice(0, 25),
      });
    }
    return { found: true, id: i.id, resources: out };
  },
});

const incident_changes = defineTool({
  name: 'incident_changes',
  description:
    'What changed before the incident on its resources and their direct neighbours: CloudTrail events with their actors, and inventory changes, within `days` before its start.',
  input: IncidentRef.extend({ days: z.number().int().min(1).max(30).default(7) }),
  async execute(i, { db, tenantId }) {
    const incident = await incidentOrMissing(db, tenantId, i.id);
    if (!incident) return { found: false, id: i.id };
    const arns = new Set(incident.resources.map((r) => r.arn));
    for (const r of incident.resources.slice(0, 10))
      for (const x of await relatedResources(db, tenantId, r.arn, { depth: 1 })) arns.add(x.arn);
    const to = new Date(incident.started_at);
    const from = new Date(to.getTime() - i.days * 86_400_000);
    const list = [...arns];
    if (!list.length)
      return {
        found: true,
        id: i.id,
        window: { from: iso(from), to: iso(to) },
        cloudtrail: [],
        changes: [],
      };
    const [events, changes] = await Promise.all([
      findCloudTrailEventsOn(db, tenantId, list, from, to),
      findResourceHistoryOf(db, tenantId, list, from, new Date(to.getTime() + 86_400_000)),
    ]);
    return {
      found: true,
      id: i.id,
      window: { from: iso(from), to: iso(to) },
      cloudtrail: events.map((e) => ({ ...e, id: Number(e.id), at: iso(e.at) })),
      changes: changes.map((c) => ({ ...c, observed_at: iso(c.observed_at) })),
    };
  },
});

const incident_metrics = defineTool({
  name: 'incident_metrics',
  description:
    "Daily metrics of the incident's resources around its start (the two days before and the day it started).",
  input: IncidentRef,
  async execute(i, { db, tenantId }) {
    const incident = await incidentOrMissing(db, tenantId, i.id);
    if (!incident) return { found: false, id: i.id };
    const start = new Date(incident.started_at);
    const day = (offset: number) =>
      new Date(start.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
    const arns = incident.resources.map((r) => r.arn);
    const rows = arns.length ? await findDailyMetrics(db, tenantId, arns, day(-2), day(0)) : [];
    const names = new Map(incident.resources.map((r) => [r.arn, r.name]));
    return {
      found: true,
      id: i.id,
      started_at: iso(incident.started_at),
      metrics: rows.map((r) => ({ ...r, name: names.get(r.arn) ?? null })),
    };
  },
});

const incident_findings = defineTool({
  name: 'incident_findings',
  description:
    "Open findings on the incident's resources and on the resources connected to them (dependencies and dependents), most severe first.",
  input: IncidentRef,
  async execute(i, { db, tenantId }) {
    const incident = await incidentOrMissing(db, tenantId, i.id);
    if (!incident) return { found: false, id: i.id };
    const relation = new Map<string, string>();
    for (const r of incident.resources) relation.set(r.arn, 'affected');
    for (const r of incident.resources.slice(0, 10))
      for (const x of await relatedResources(db, tenantId, r.arn, { depth: 1 }))
        if (!relation.has(x.arn))
          relation.set(x.arn, x.direction === 'dependent' ? 'dependent' : 'dependency');
    const arns = [...relation.keys()];
    const rows = arns.length ? await findActiveFindingsOn(db, tenantId, arns) : [];
    // A finding on several of these resources is listed once, on the closest of them.
    const rank = (arn: string) => (relation.get(arn) === 'affected' ? 0 : 1);
    const byId = new Map<string, (typeof rows)[number]>();
    for (const r of rows) {
      const seen = byId.get(r.id);
      if (!seen || rank(r.arn) < rank(seen.arn)) byId.set(r.id, r);
    }
    return {
      found: true,
      id: i.id,
      findings: [...byId.values()].map((r) => ({ ...r, relation: relation.get(r.arn) ?? 'affected' })),
    };
  },
});

const similar_incidents = defineTool({
  name: 'similar_incidents',
  description:
    'Past incidents like this one: the one it recurs, and others that shared an alert fingerprint or a resource with it.',
  input: IncidentRef,
  async execute(i, { db, tenantId }) {
    const incident = await incidentOrMissing(db, tenantId, i.id);
    if (!incident) return { found: false, id: i.id };
    const rows = await findSimilarIncidents(
      db,
      tenantId,
      i.id,
      incident.recurrence_of,
      new Date(incident.started_at),
    );
    return {
      found: true,
      id: i.id,
      incidents: rows.rows.map((r) => ({
        ...r,
        started_at: iso(r.started_at),
        resolved_at: iso(r.resolved_at),
      })),
    };
  },
});

/**
 * The agent's incident tools, read-only (bound to a tenant by the agent's catalog): list, detail and timeline, and what an
 * investigation gathers (related resources, changes with actors, metrics around the start, open
 * findings on connected nodes, similar past incidents).
 */
export const INCIDENT_TOOLS = [
  list_incidents,
  get_incident,
  incident_timeline,
  incident_related_resources,
  incident_changes,
  incident_metrics,
  incident_findings,
  similar_incidents,
] as const;
