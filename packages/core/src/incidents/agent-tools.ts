import { z } from 'zod';
import { defineTool } from '../define-tool';
import { sql, type Db } from '@opsi/db';
import { getIncident, listTimeline } from './incidents';
import { incidentAlerts, relatedResources } from './queries';
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';

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
    let q = db
      .selectFrom('incidents')
      .select([
        'id',
        'title',
        'severity',
        'status',
        'source',
        'started_at',
        'created_at',
        'resolved_at',
        'recurrence_of',
      ])
      .where('tenant_id', '=', tenantId);
    if (i.status === 'active') q = q.where('status', '<>', 'resolved');
    else if (i.status) q = q.where('status', '=', i.status);
    if (i.severity) q = q.where('severity', '=', i.severity);
    const total = await q
      .clearSelect()
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(i.limit).execute();
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
      const names = await db
        .selectFrom('resources')
        .select(['arn', 'name', 'type'])
        .where('tenant_id', '=', tenantId)
        .where('arn', 'in', related.length ? related.map((x) => x.arn) : [''])
        .execute();
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
      db
        .selectFrom('inventory_events')
        .select(['id', 'at', 'name', 'actor', 'source_ip', 'arns'])
        .where('tenant_id', '=', tenantId)
        .where('kind', '=', 'cloudtrail')
        .where('at', '>=', from)
        .where('at', '<=', to)
        .where(sql<boolean>`arns && ${sql.val(list)}::text[]`)
        .orderBy('at', 'desc')
        .limit(50)
        .execute(),
      db
        .selectFrom('resource_history')
        .select(['arn', 'change', 'changed_fields', 'observed_at'])
        .where('tenant_id', '=', tenantId)
        .where('arn', 'in', list)
        .where('observed_at', '>=', from)
        .where('observed_at', '<=', new Date(to.getTime() + 86_400_000))
        .orderBy('observed_at', 'desc')
        .limit(50)
        .execute(),
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
    const rows = arns.length
      ? await db
          .selectFrom('metrics_daily')
          .select(['arn', 'metric', sql<string>`day::text`.as('day'), 'avg', 'max'])
          .where('tenant_id', '=', tenantId)
          .where('arn', 'in', arns)
          .where(sql<boolean>`day between ${day(-2)}::date and ${day(0)}::date`)
          .orderBy('arn')
          .orderBy('metric')
          .orderBy('day')
          .execute()
      : [];
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
    const rows = arns.length
      ? await db
          .selectFrom('finding_resources as fr')
          .innerJoin('findings as f', 'f.id', 'fr.finding_id')
          .leftJoin('resources as r', (j) =>
            j.onRef('r.arn', '=', 'fr.arn').onRef('r.tenant_id', '=', 'fr.tenant_id'),
          )
          .select(['f.id', 'f.title', 'f.severity', 'f.domain', 'fr.arn', 'r.name as resource_name'])
          .where('fr.tenant_id', '=', tenantId)
          .where('fr.arn', 'in', arns)
          .where('f.status', 'in', ACTIVE_FINDING_STATUSES)
          .orderBy('f.severity_rank', 'desc')
          .orderBy('f.id')
          .limit(50)
          .execute()
      : [];
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
    const rows = await sql<{
      id: string;
      title: string;
      severity: string;
      status: string;
      started_at: Date;
      resolved_at: Date | null;
      shared: string;
    }>`
      select i.id, i.title, i.severity, i.status, i.started_at, i.resolved_at,
        case when i.id = ${incident.recurrence_of} then 'recurrence'
             when exists (select 1 from triage_events a join triage_events b on b.fingerprint = a.fingerprint and b.tenant_id = a.tenant_id
                          where a.incident_id = ${i.id} and b.incident_id = i.id) then 'fingerprint'
             else 'resource' end as shared
      from incidents i
      where i.tenant_id = ${tenantId} and i.id <> ${i.id} and i.started_at < ${new Date(incident.started_at)}
        and (i.id = ${incident.recurrence_of}
          or exists (select 1 from triage_events a join triage_events b on b.fingerprint = a.fingerprint and b.tenant_id = a.tenant_id
                     where a.incident_id = ${i.id} and b.incident_id = i.id)
          or exists (select 1 from incident_resources x join incident_resources y on y.arn = x.arn
                     where x.incident_id = ${i.id} and y.incident_id = i.id))
      order by i.started_at desc limit 10`.execute(db);
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
