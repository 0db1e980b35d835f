import {
  type Db,
  type IncidentSeverity,
  type IncidentStatus,
  type Transaction,
  type Database,
} from '@opsi/db';
import type { TimelineEntry, TimelineLog } from '@opsi/jobs';
import type { Auth } from '../context';
import { NotFound } from '../errors';
import {
  countAlertsOfIncidents,
  findIncident,
  findIncidentEvents,
  findIncidentId,
  findIncidentResourceNodes,
  findIncidents,
  findNodesByArn,
  findWarRoomsOfIncidents,
  insertIncident,
  insertIncidentEvent,
  lockIncidentForPatch,
  lockIncidentRow,
  touchIncident,
  updateIncident,
} from './repository';

/** What incident writes need: the database, and the live side of timelines. */
export interface IncidentDeps {
  db: Db;
  timeline: TimelineLog;
}

type Tx = Transaction<Database> | Db;

export interface GraphNodeRow {
  id: string;
  arn: string;
  native_id: string;
  type: string;
  name: string | null;
  account_id: string;
  region: string;
}

/** Graph nodes of the tenant's inventory by ARN (deleted resources are left out). */
export async function nodesByArn(
  db: Tx,
  tenantId: string,
  arns: string[],
): Promise<Map<string, GraphNodeRow>> {
  if (!arns.length) return new Map();
  const rows = await findNodesByArn(db, tenantId, arns);
  return new Map(rows.map((r) => [r.arn, r]));
}

/** The actor string of a person (as learnings record it). */
export function actorOf(auth: Auth): string {
  return `user:${auth.user.email}`;
}

async function shape(db: Tx, tenantId: string, rows: Array<{ id: string } & Record<string, unknown>>) {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const [resources, rooms, alerts] = await Promise.all([
    findIncidentResourceNodes(db, tenantId, ids),
    findWarRoomsOfIncidents(db, tenantId, ids),
    countAlertsOfIncidents(db, tenantId, ids),
  ]);
  return rows.map((r) => ({
    ...(r as unknown as IncidentRow),
    resources: resources.filter((x) => x.incident_id === r.id).map(({ incident_id: _i, ...node }) => node),
    war_room: (() => {
      const room = rooms.find((x) => x.incident_id === r.id);
      return room ? { id: room.id, session_id: room.session_id } : null;
    })(),
    alert_count: alerts.find((a) => a.incident_id === r.id)?.n ?? 0,
  }));
}

interface IncidentRow {
  id: string;
  title: string;
  severity: IncidentSeverity;
  status: IncidentStatus;
  description: string | null;
  created_at: Date;
  updated_at: Date;
  resolved_at: Date | null;
  started_at: Date;
  source: 'manual' | 'triage';
  created_by: string;
  recurrence_of: string | null;
}

export type Incident = Awaited<ReturnType<typeof shape>>[number];

/** A tenant's incidents, newest first. */
export async function listIncidents(
  db: Db,
  tenantId: string,
  f: {
    status?: IncidentStatus | undefined;
    severity?: IncidentSeverity | undefined;
    limit: number;
    offset: number;
  },
) {
  const rows = await findIncidents(db, tenantId, f);
  return shape(db, tenantId, rows);
}

/** One incident of the tenant; another tenant's id is 404 like a missing one. */
export async function getIncident(db: Tx, tenantId: string, id: string): Promise<Incident> {
  const row = await findIncident(db, tenantId, id);
  if (!row) throw new NotFound('No such incident.');
  return (await shape(db, tenantId, [row]))[0]!;
}

function wire(row: {
  id: number | string;
  incident_id: string;
  kind: string;
  body: string;
  actor: string;
  created_at: Date;
  data: Record<string, unknown>;
}): TimelineEntry & { data: Record<string, unknown> } {
  return {
    id: Number(row.id),
    incident_id: row.incident_id,
    kind: row.kind,
    body: row.body,
    actor: row.actor,
    created_at: row.created_at.toISOString(),
    data: row.data ?? {},
  };
}

export interface NewTimelineEvent {
  kind: string;
  body: string;
  actor: string;
  data?: Record<string, unknown>;
  /** An investigation's events carry its run: each (run, kind) is written once. */
  runId?: string;
}

/** The events a transaction appended, published once it commits (see timelineTransaction). */
const outboxes = new WeakMap<
  Transaction<Database>,
  Array<{ log: TimelineLog | undefined; event: TimelineEntry }>
>();

/**
 * Runs `fn` in a transaction and publishes the timeline events it appended to the live stream after the
 * commit, never before: a reader woken by an event must find it in Postgres (published inside the
 * transaction, a stream reader could see an event that a GET of the timeline did not, or one a
 * rollback then erased). A transaction that fails publishes nothing.
 */
export async function timelineTransaction<T>(
  db: Db,
  fn: (tx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const outbox: Array<{ log: TimelineLog | undefined; event: TimelineEntry }> = [];
  const result = await db.transaction().execute((tx) => {
    outboxes.set(tx, outbox);
    return fn(tx);
  });
  for (const { log, event } of outbox) await log?.append(event);
  return result;
}

/**
 * Appends a timeline event inside the caller's transaction (opened with timelineTransaction), under the
 * incident's row lock, so an incident's events commit in id order. The live stream hears of it after the
 * commit. Answers undefined when the (run, kind) event already exists.
 */
export async function appendTimelineEvent(
  tx: Transaction<Database>,
  timeline: TimelineLog | undefined,
  tenantId: string,
  incidentId: string,
  e: NewTimelineEvent,
) {
  await lockIncidentRow(tx, tenantId, incidentId);
  const row = await insertIncidentEvent(tx, {
    tenantId,
    incidentId,
    kind: e.kind,
    body: e.body,
    actor: e.actor,
    data: JSON.stringify(e.data ?? {}),
    runId: e.runId ?? null,
  });
  if (!row) return undefined;
  const event = wire(row);
  const outbox = outboxes.get(tx);
  if (!outbox) throw new Error('appendTimelineEvent needs a transaction opened with timelineTransaction.');
  outbox.push({ log: timeline, event });
  return event;
}

/** Opens an incident by hand: one `created` timeline event. */
export async function createIncident(
  deps: IncidentDeps,
  auth: Auth,
  input: { title: string; severity: IncidentSeverity; description?: string | undefined },
) {
  const id = await timelineTransaction(deps.db, async (tx) => {
    const row = await insertIncident(tx, {
      tenantId: auth.tenant.id,
      title: input.title,
      severity: input.severity,
      description: input.description ?? null,
      createdBy: actorOf(auth),
    });
    await appendTimelineEvent(tx, deps.timeline, auth.tenant.id, row.id, {
      kind: 'created',
      body: `Incident opened: ${input.title} (${input.severity}).`,
      actor: actorOf(auth),
      data: { severity: input.severity, source: 'manual' },
    });
    return row.id;
  });
  return getIncident(deps.db, auth.tenant.id, id);
}

/** Changes status, severity, title or description; each change is a timeline event. */
export async function patchIncident(
  deps: IncidentDeps,
  auth: Auth,
  id: string,
  patch: {
    status?: IncidentStatus | undefined;
    severity?: IncidentSeverity | undefined;
    title?: string | undefined;
    description?: string | null | undefined;
  },
) {
  const tenantId = auth.tenant.id;
  await timelineTransaction(deps.db, async (tx) => {
    const current = await lockIncidentForPatch(tx, tenantId, id);
    if (!current) throw new NotFound('No such incident.');
    const actor = actorOf(auth);
    const events: NewTimelineEvent[] = [];
    const set: Record<string, unknown> = {};
    if (patch.status && patch.status !== current.status) {
      set.status = patch.status;
      set.resolved_at = patch.status === 'resolved' ? new Date() : null;
      events.push({
        kind: 'status_changed',
        body: `Status changed from ${current.status} to ${patch.status}.`,
        actor,
        data: { from: current.status, to: patch.status },
      });
    }
    if (patch.severity && patch.severity !== current.severity) {
      set.severity = patch.severity;
      events.push({
        kind: 'severity_changed',
        body: `Severity changed from ${current.severity} to ${patch.severity}.`,
        actor,
        data: { from: current.severity, to: patch.severity },
      });
    }
    if (patch.title !== undefined && patch.title !== current.title) {
      set.title = patch.title;
      events.push({
        kind: 'title_changed',
        body: `Title changed to "${patch.title}".`,
        actor,
        data: { from: current.title, to: patch.title },
      });
    }
    if (patch.description !== undefined && patch.description !== current.description) {
      set.description = patch.description;
      events.push({ kind: 'description_changed', body: 'Description updated.', actor, data: {} });
    }
    if (!events.length) return;
    await updateIncident(tx, id, set);
    for (const e of events) await appendTimelineEvent(tx, deps.timeline, tenantId, id, e);
  });
  return getIncident(deps.db, tenantId, id);
}

/** The timeline after `afterId` (exactly the events with a greater id), oldest first. */
export async function listTimeline(db: Db, tenantId: string, incidentId: string, afterId = 0, limit = 500) {
  const exists = await findIncidentId(db, tenantId, incidentId);
  if (!exists) throw new NotFound('No such incident.');
  const rows = await findIncidentEvents(db, tenantId, incidentId, afterId, limit);
  return rows.map(wire);
}

/** A note on the timeline. */
export async function addTimelineNote(deps: IncidentDeps, auth: Auth, incidentId: string, body: string) {
  return timelineTransaction(deps.db, async (tx) => {
    const found = await findIncidentId(tx, auth.tenant.id, incidentId);
    if (!found) throw new NotFound('No such incident.');
    await touchIncident(tx, incidentId);
    return (await appendTimelineEvent(tx, deps.timeline, auth.tenant.id, incidentId, {
      kind: 'note',
      body,
      actor: actorOf(auth),
    }))!;
  });
}
