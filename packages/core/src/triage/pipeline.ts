import { type Database, type Db, type IncidentSeverity, type TriageAction, type Transaction } from '@opsi/db';
import type { JobProducer, TimelineLog } from '@opsi/jobs';
import type { DeliveryPolicy } from '../events';
import { appendTimelineEvent, timelineTransaction } from '../incidents';
import { relatedResources } from '../incidents';
import type { AlertSeverity, NormalizedAlert } from './normalize';
import {
  countRepeat,
  findEnabledRules,
  findIncidentMembers,
  findIncidentWithFingerprint,
  findLastResolvedIncidentOf,
  findOpenIncidentsNear,
  findResourceByRef,
  insertIncidentResource,
  insertTriageEvent,
  insertTriageIncident,
  insertTriageRef,
  lockAdvisory,
  lockInboxDecision,
  markIncidentAlerted,
  markInboxDecided,
  markRepeats,
  markTriageEventResolved,
  resolveIncidentAt,
  resolveLatestFiringEvent,
} from './repository';

/** What the pipeline needs: the database, the live timeline, and its windows. */
export interface TriageDeps {
  db: Db;
  timeline?: TimelineLog | undefined;
  dedupeWindowMinutes: number;
  correlationWindowMinutes: number;
  /**
   * Where the incidents triage opens are announced (`incident.opened` notifier deliveries), after the
   * decision commits. Without it (tests of the pipeline alone) nothing is delivered.
   */
  notify?: { producer: JobProducer; policy: DeliveryPolicy } | undefined;
}

export interface TriageDecision {
  /** The inbox row decided, for a posted alert. */
  inbox_id?: number;
  event_id: number;
  action: TriageAction;
  incident_id: string | null;
}

export interface TriageRuleView {
  id: string;
  name: string;
  kind: 'dedupe' | 'suppress' | 'correlate' | 'route';
  match: Record<string, unknown>;
  action: Record<string, unknown>;
  enabled: boolean;
  built_in: boolean;
}

/** The rules every tenant has; a tenant's own rules come first. */
export function builtInRules(
  deps: Pick<TriageDeps, 'dedupeWindowMinutes' | 'correlationWindowMinutes'>,
): TriageRuleView[] {
  return [
    {
      id: 'builtin:dedupe-fingerprint',
      name: 'Repeats of one alert (same fingerprint) within the window are one event with a count',
      kind: 'dedupe',
      match: { fingerprint: '*' },
      action: { window_minutes: deps.dedupeWindowMinutes },
      enabled: true,
      built_in: true,
    },
    {
      id: 'builtin:suppress-info',
      name: 'Informational alerts are counted, never paged',
      kind: 'suppress',
      match: { severity: ['info'] },
      action: { suppress: true },
      enabled: true,
      built_in: true,
    },
    {
      id: 'builtin:suppress-resolved',
      name: 'A resolved notification for nothing that was firing is counted only',
      kind: 'suppress',
      match: { status: 'resolved' },
      action: { suppress: true },
      enabled: true,
      built_in: true,
    },
    {
      id: 'builtin:correlate-graph',
      name: 'An alert joins an open incident on the same resource, or one connected to it in the graph',
      kind: 'correlate',
      match: {},
      action: {
        same_resource: true,
        graph: 'dependencies or dependents',
        graph_depth: 3,
        window_minutes: deps.correlationWindowMinutes,
      },
      enabled: true,
      built_in: true,
    },
    {
      id: 'builtin:route-critical-high',
      name: 'Critical and high alerts that match no incident open one',
      kind: 'route',
      match: { severity: ['critical', 'high'] },
      action: { open_incident: true },
      enabled: true,
      built_in: true,
    },
  ];
}

/** Does a rule's match select this alert? Keys: fingerprint, severity, source, status, title_contains, labels. */
export function ruleMatches(match: Record<string, unknown>, a: NormalizedAlert): boolean {
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : [String(v)]);
  if (
    match.fingerprint !== undefined &&
    match.fingerprint !== '*' &&
    !list(match.fingerprint).includes(a.fingerprint)
  )
    return false;
  if (match.severity !== undefined && !list(match.severity).includes(a.severity)) return false;
  if (match.source !== undefined && !list(match.source).includes(a.source)) return false;
  if (match.status !== undefined && !list(match.status).includes(a.status)) return false;
  if (
    typeof match.title_contains === 'string' &&
    !a.title.toLowerCase().includes(match.title_contains.toLowerCase())
  )
    return false;
  if (match.labels && typeof match.labels === 'object') {
    for (const [k, v] of Object.entries(match.labels as Record<string, unknown>))
      if (a.labels[k] !== String(v)) return false;
  }
  return true;
}

const INCIDENT_SEVERITY: Record<AlertSeverity, IncidentSeverity> = {
  critical: 'SEV1',
  high: 'SEV2',
  medium: 'SEV3',
  low: 'SEV4',
  info: 'SEV4',
};

type Tx = Transaction<Database>;

async function lock(tx: Tx, key: string) {
  await lockAdvisory(tx, key);
}

/** The inventory resource an alert names: ARN, native id, name, or the tail of an ARN (a CloudWatch dimension). */
export async function matchResource(db: Db | Tx, tenantId: string, ref: string | null) {
  if (!ref) return undefined;
  const row = await findResourceByRef(db, tenantId, ref);
  return row;
}

/** The rules that apply to a tenant's alerts: its enabled rules first (oldest first), then the built-in ones. */
export async function rulesFor(deps: TriageDeps, tenantId: string): Promise<TriageRuleView[]> {
  const rows = await findEnabledRules(deps.db, tenantId);
  return withBuiltInRules(deps, rows);
}

/** A tenant's enabled rules as read (oldest first), then the built-in ones. */
export function withBuiltInRules(
  deps: Pick<TriageDeps, 'dedupeWindowMinutes' | 'correlationWindowMinutes'>,
  own: Array<Omit<TriageRuleView, 'built_in'>>,
): TriageRuleView[] {
  return [...own.map((r) => ({ ...r, built_in: false })), ...builtInRules(deps)];
}

/** The dedupe window for an alert: the first dedupe rule that matches it (a tenant's before the built-in one). */
function dedupeWindowMs(deps: TriageDeps, rules: TriageRuleView[], a: NormalizedAlert): number {
  const rule = rules.find((r) => r.kind === 'dedupe' && ruleMatches(r.match, a));
  return Number(rule?.action.window_minutes ?? deps.dedupeWindowMinutes) * 60_000;
}

/** What the caller records with a decision, in the same statement or transaction. */
export type Bookkeeping = { inboxId: number } | { ref: string } | undefined;

async function keep(tx: Tx, tenantId: string, book: Bookkeeping, d: TriageDecision) {
  if (!book) return;
  if ('inboxId' in book) await markInboxDecided(tx, book.inboxId, d.event_id, d.action);
  else await insertTriageRef(tx, tenantId, book.ref, d.event_id);
}

/**
 * Decides one alert. A repeat (same fingerprint within the window) is one statement: the event's count
 * goes up and the caller's bookkeeping is written with it, atomically. Anything else is one transaction:
 * under the fingerprint's lock (re-checking for a repeat) and the tenant's, suppress by rule, else
 * correlate with an open incident (same resource, or connected in the graph, alerted within the window)
 * and attach, else open an incident when a route rule says so (linking the last resolved incident with
 * the same fingerprint as its recurrence), else record it as new. Two alerts of one problem never open
 * two incidents.
 */
export async function decideAlert(
  deps: TriageDeps,
  tenantId: string,
  a: NormalizedAlert,
  book?: Bookkeeping,
  rules?: TriageRuleView[],
): Promise<TriageDecision> {
  return (await decideOne(deps, tenantId, a, book, rules ?? (await rulesFor(deps, tenantId)))).decision;
}

/** decideAlert, also answering the span of the event the alert was counted on (for in-batch repeats). */
async function decideOne(
  deps: TriageDeps,
  tenantId: string,
  a: NormalizedAlert,
  book: Bookkeeping,
  rules: TriageRuleView[],
): Promise<{ decision: TriageDecision; first: number; last: number }> {
  const at = new Date(a.starts_at);
  if (a.status === 'resolved') {
    const resolved = await resolveFiring(deps, tenantId, a, book);
    if (resolved) return resolved;
  }
  const windowMs = dedupeWindowMs(deps, rules, a);
  const fast = await repeat(deps.db, tenantId, a, at, windowMs, book);
  if (fast) return fast;
  return timelineTransaction(deps.db, async (tx) => {
    await lock(tx, `${tenantId}:triage:fp:${a.fingerprint}`);
    // Another attempt of the same job may have decided this alert meanwhile (a stalled job taken over
    // while its first worker still runs): then its decision stands, counted once.
    const done = book && 'inboxId' in book ? await decidedAlready(tx, tenantId, book.inboxId) : undefined;
    if (done) return done;
    const again = await repeat(tx, tenantId, a, at, windowMs, book);
    if (again) return again;
    await lock(tx, `${tenantId}:triage`);
    const decision = await decideNew(deps, tx, tenantId, a, at, rules);
    await keep(tx, tenantId, book, decision);
    return { decision, first: at.getTime(), last: at.getTime() };
  });
}

/**
 * Decides a batch of posted alerts in one pass, in order, given the tenant's rules and the latest event
 * of each of the batch's fingerprints (read with the batch, in one statement). A repeat (same fingerprint, within the window of the event's span as this
 * pass knows it) is counted in memory, and all of those are written at the end in ONE statement that marks
 * their inbox rows and adds to their events' counts only for rows not marked yet: a worker that dies
 * before it leaves those rows undecided, and the retry decides them (never twice).
 */
export async function decideBatch(
  deps: TriageDeps,
  tenantId: string,
  items: Array<{ inboxId: number; alert: NormalizedAlert }>,
  { rules, latest }: { rules: TriageRuleView[]; latest: LatestEvent[] },
): Promise<TriageDecision[]> {
  if (!items.length) return [];
  const seen = new Map<string, { eventId: number; incidentId: string | null; first: number; last: number }>(
    latest.map((e) => [
      e.fingerprint,
      {
        eventId: e.id,
        incidentId: e.incident_id,
        first: new Date(e.first_at).getTime(),
        last: new Date(e.last_at).getTime(),
      },
    ]),
  );
  const deferred: DeferredRepeat[] = [];
  const out: TriageDecision[] = [];
  for (const { inboxId, alert: a } of items) {
    const at = new Date(a.starts_at).getTime();
    const windowMs = dedupeWindowMs(deps, rules, a);
    const s = seen.get(a.fingerprint);
    if (a.status === 'resolved') {
      // A resolution is decided on its own (it may write a timeline note): the repeats counted before it
      // are written first, so they cannot overwrite its status.
      await countRepeats(deps.db, tenantId, deferred.splice(0));
    } else if (s && s.last >= at - windowMs && s.first <= at + windowMs) {
      s.first = Math.min(s.first, at);
      s.last = Math.max(s.last, at);
      deferred.push({ inboxId, eventId: s.eventId, at: new Date(at), status: a.status });
      out.push({ inbox_id: inboxId, event_id: s.eventId, action: 'deduplicated', incident_id: s.incidentId });
      continue;
    }
    const { decision, first, last } = await decideOne(deps, tenantId, a, { inboxId }, rules);
    seen.set(a.fingerprint, { eventId: decision.event_id, incidentId: decision.incident_id, first, last });
    out.push({ ...decision, inbox_id: inboxId });
  }
  await countRepeats(deps.db, tenantId, deferred);
  return out;
}

/** The latest event of a fingerprint, as read with a batch (JSON: its times are ISO strings). */
export interface LatestEvent {
  id: number;
  fingerprint: string;
  incident_id: string | null;
  first_at: string;
  last_at: string;
}

interface DeferredRepeat {
  inboxId: number;
  eventId: number;
  at: Date;
  status: string;
}

/** Writes in-batch repeats: marks their inbox rows (those not marked yet) and counts exactly those. */
async function countRepeats(db: Db, tenantId: string, repeats: DeferredRepeat[]) {
  for (let i = 0; i < repeats.length; i += 5000) {
    const chunk = repeats.slice(i, i + 5000);
    await markRepeats(db, tenantId, chunk);
  }
}

/** The repeat of an alert already seen within the window: counted on its event, with the bookkeeping, in one statement. */
async function repeat(
  db: Db | Tx,
  tenantId: string,
  a: NormalizedAlert,
  at: Date,
  windowMs: number,
  book: Bookkeeping,
): Promise<{ decision: TriageDecision; first: number; last: number } | undefined> {
  const row = await countRepeat(db, tenantId, a, at, windowMs, book);
  return row
    ? {
        decision: { event_id: Number(row.id), action: 'deduplicated', incident_id: row.incident_id },
        first: new Date(row.first_at).getTime(),
        last: new Date(row.last_at).getTime(),
      }
    : undefined;
}

/**
 * A resolved alert whose fingerprint has a firing event (the latest one, however old: a problem may fire
 * for longer than the dedupe window): counted on that event, which becomes resolved, with a timeline note
 * on the incident it joined, in one transaction under the fingerprint's lock. Undefined when nothing of
 * that fingerprint is firing (the alert is then decided as any other: a repeat, or suppressed).
 */
async function resolveFiring(
  deps: TriageDeps,
  tenantId: string,
  a: NormalizedAlert,
  book: Bookkeeping,
): Promise<{ decision: TriageDecision; first: number; last: number } | undefined> {
  return timelineTransaction(deps.db, async (tx) => {
    await lock(tx, `${tenantId}:triage:fp:${a.fingerprint}`);
    const done = book && 'inboxId' in book ? await decidedAlready(tx, tenantId, book.inboxId) : undefined;
    if (done) return done;
    const at = new Date(a.starts_at);
    const event = await resolveLatestFiringEvent(tx, tenantId, a.fingerprint, at);
    if (!event) return undefined;
    const decision: TriageDecision = {
      event_id: Number(event.id),
      action: 'deduplicated',
      incident_id: event.incident_id,
    };
    await keep(tx, tenantId, book, decision);
    if (event.incident_id)
      await appendTimelineEvent(tx, deps.timeline, tenantId, event.incident_id, {
        kind: 'alert_resolved',
        body: `Alert ${event.title} resolved (${a.source}, fingerprint ${a.fingerprint}).`,
        actor: 'triage',
        data: { triage_event_id: Number(event.id), fingerprint: a.fingerprint, at: at.toISOString() },
      });
    return {
      decision,
      first: new Date(event.first_at).getTime(),
      last: new Date(event.last_at).getTime(),
    };
  });
}

/** The decision an inbox row already holds (its row locked until the transaction ends), if it has one. */
async function decidedAlready(
  tx: Tx,
  tenantId: string,
  inboxId: number,
): Promise<{ decision: TriageDecision; first: number; last: number } | undefined> {
  const row = await lockInboxDecision(tx, tenantId, inboxId);
  if (!row?.processed_at || row.event_id === null || !row.action) return undefined;
  return {
    decision: { event_id: Number(row.event_id), action: row.action, incident_id: row.incident_id ?? null },
    first: new Date(row.first_at ?? row.processed_at).getTime(),
    last: new Date(row.last_at ?? row.processed_at).getTime(),
  };
}

async function decideNew(
  deps: TriageDeps,
  tx: Tx,
  tenantId: string,
  a: NormalizedAlert,
  at: Date,
  rules: TriageRuleView[],
) {
  const resource = await matchResource(tx, tenantId, a.resource);
  const arn = resource?.arn ?? null;
  const insertEvent = async (action: TriageAction, incidentId: string | null) =>
    Number(
      (
        await insertTriageEvent(tx, {
          tenantId,
          source: a.source,
          fingerprint: a.fingerprint,
          title: a.title,
          severity: a.severity,
          arn,
          action,
          incidentId,
          at,
          status: a.status,
          labels: JSON.stringify(a.labels),
        })
      ).id,
    );

  // The first suppress rule that matches decides: a tenant's {suppress: false} overrides a built-in one.
  const suppress = rules.find((r) => r.kind === 'suppress' && ruleMatches(r.match, a));
  if (suppress && suppress.action.suppress !== false)
    return {
      event_id: await insertEvent('suppressed', null),
      action: 'suppressed' as const,
      incident_id: null,
    };

  // Correlate: open incidents alerted within the window, on this resource or one connected to it.
  const correlate = rules.find((r) => r.kind === 'correlate' && ruleMatches(r.match, a));
  if (correlate) {
    const windowMs = Number(correlate.action.window_minutes ?? deps.correlationWindowMinutes) * 60_000;
    const open = await findOpenIncidentsNear(tx, tenantId, at, windowMs);
    if (open.length) {
      let match: { id: string; title: string } | undefined;
      let how = '';
      const members = await findIncidentMembers(
        tx,
        open.map((o) => o.id),
      );
      if (arn) {
        const same = members.find((m) => m.arn === arn);
        if (same) {
          match = open.find((o) => o.id === same.incident_id);
          how = 'same resource';
        } else {
          // Inside the transaction: embedded Postgres (PGlite) has one connection, which it holds.
          const related = await relatedResources(tx, tenantId, arn, {
            depth: Number(correlate.action.graph_depth ?? 3),
          });
          const near = related.find((r) => members.some((m) => m.arn === r.arn));
          if (near) {
            const member = members.find((m) => m.arn === near.arn)!;
            match = open.find((o) => o.id === member.incident_id);
            how = `connected in the graph to ${near.arn} (${near.via.join(' → ')})`;
          }
        }
      } else {
        // No resource: an incident that already has this fingerprint.
        const same = await findIncidentWithFingerprint(
          tx,
          tenantId,
          a.fingerprint,
          open.map((o) => o.id),
        );
        if (same) {
          match = open.find((o) => o.id === same.incident_id);
          how = 'same fingerprint';
        }
      }
      if (match) {
        const eventId = await insertEvent('correlated', match.id);
        await attach(deps, tx, tenantId, match.id, a, arn, at, eventId, how);
        return { event_id: eventId, action: 'correlated' as const, incident_id: match.id };
      }
    }
  }

  const route = rules.find((r) => r.kind === 'route' && ruleMatches(r.match, a));
  if (route && route.action.open_incident !== false && a.status === 'firing') {
    const severity = (route.action.severity as IncidentSeverity | undefined) ?? INCIDENT_SEVERITY[a.severity];
    const title = `${a.title}${resource?.name ? ` on ${resource.name}` : ''}`.slice(0, 300);
    // A recurrence: the last resolved incident that had this fingerprint.
    const past = await findLastResolvedIncidentOf(tx, tenantId, a.fingerprint);
    const incident = await insertTriageIncident(tx, {
      tenantId,
      title,
      severity,
      at,
      recurrenceOf: past?.id ?? null,
      description: `Opened by triage rule ${route.id} from a ${a.severity} alert (${a.source}, fingerprint ${a.fingerprint}).`,
    });
    await appendTimelineEvent(tx, deps.timeline, tenantId, incident.id, {
      kind: 'created',
      body: `Incident opened by triage: ${title} (${severity}).`,
      actor: 'triage',
      data: { severity, source: 'triage', rule: route.id },
    });
    const eventId = await insertEvent('incident_opened', incident.id);
    await attach(deps, tx, tenantId, incident.id, a, arn, at, eventId, 'opened it');
    if (past)
      await appendTimelineEvent(tx, deps.timeline, tenantId, incident.id, {
        kind: 'linked',
        body: `Recurrence of incident ${past.id} (${past.title}), which had the same alert (fingerprint ${a.fingerprint}).`,
        actor: 'triage',
        data: { incident_id: past.id, relation: 'recurrence_of', fingerprint: a.fingerprint },
      });
    if (a.ends_at && new Date(a.ends_at) <= new Date()) {
      // A past alert that had already ended: its incident is history.
      await resolveIncidentAt(tx, incident.id, new Date(a.ends_at));
      await markTriageEventResolved(tx, eventId);
      await appendTimelineEvent(tx, deps.timeline, tenantId, incident.id, {
        kind: 'status_changed',
        body: `Status changed from open to resolved: the alert ended at ${a.ends_at}.`,
        actor: 'triage',
        data: { from: 'open', to: 'resolved' },
      });
    }
    return { event_id: eventId, action: 'incident_opened' as const, incident_id: incident.id };
  }
  return { event_id: await insertEvent('new', null), action: 'new' as const, incident_id: null };
}

async function attach(
  deps: TriageDeps,
  tx: Tx,
  tenantId: string,
  incidentId: string,
  a: NormalizedAlert,
  arn: string | null,
  at: Date,
  eventId: number,
  how: string,
) {
  if (arn) await insertIncidentResource(tx, tenantId, incidentId, arn);
  await markIncidentAlerted(tx, incidentId, at);
  await appendTimelineEvent(tx, deps.timeline, tenantId, incidentId, {
    kind: 'alert_attached',
    body: `Alert ${a.title} (${a.severity}, ${a.source}) attached: ${how}.`,
    actor: 'triage',
    data: { triage_event_id: eventId, fingerprint: a.fingerprint, arn, at: at.toISOString() },
  });
}
