import type { Db, TriageAction } from '@opsi/db';
import { nodesByArn } from '../incidents';
import { enqueueDeliveries } from '../integrations';
import { GroupCommit } from '../group-commit';
import {
  decideAlert,
  decideBatch,
  builtInRules,
  rulesFor,
  withBuiltInRules,
  type LatestEvent,
  type TriageDeps,
  type TriageRuleView,
  type TriageDecision,
} from './pipeline';
import { normalizeInventoryAlert, type NormalizedAlert } from './normalize';
import {
  countEnabledRules,
  countOpenAlerts,
  findBatchDecisions,
  findLastEventAt,
  findOpenTriageIncidents,
  findPipelineStats,
  findTenantRules,
  findTriageEvents,
  findUntriagedInventoryAlerts,
  insertInboxAlerts,
  readBatchState,
} from './repository';

/** What admission reserved for a batch's job (its place among the tenants' jobs), passed to its enqueue. */
export type Admitted = { priority: number } | undefined;

/** What one request gets back from triage intake: its alerts' decisions, or pending when not decided in time. */
export interface AcceptedAlerts {
  accepted: number;
  batch_id: string;
  pending: boolean;
  events: Array<{ id: number; action: TriageAction; incident_id: string | null }>;
}

export interface TriageIntakeDeps {
  db: Db;
  /**
   * Queues the triage job of a batch (its payload lists the inbox ids) and waits for its result; undefined
   * when it was not decided in time (or failed and is retrying).
   */
  enqueueAndWait(
    tenantId: string,
    batchId: string,
    inboxIds: number[],
    admitted?: Admitted,
  ): Promise<{ decisions?: TriageDecision[] } | undefined>;
  /**
   * Admission of a batch, before its insert: throws (BacklogFull: 503) when the tenant's triage backlog is
   * at its bound, else answers what `enqueueAndWait` is given (the job's reserved fair place). Once per
   * batch: every request of a refused batch gets the refusal, and nothing is stored.
   */
  admit?(tenantId: string): Promise<Admitted>;
  /** Most alerts in one batch. */
  maxItems: number;
  /** Most batches of one tenant between inbox insert and decision at once. */
  maxInFlight: number;
  /**
   * How long a batch waiting for its decision holds its in-flight slot at most: past it, newer requests
   * go as a new batch (when the worker is slow or down, requests are not held back behind the wait).
   */
  holdMs?: number;
}

/**
 * Triage intake with group commit: the alerts of concurrent requests of one tenant go into the inbox as
 * ONE insert under one batch id, with ONE triage job whose payload lists the inbox ids; the worker decides
 * the batch in one pass, and each request answers with its own alerts' decisions (matched by inbox id).
 * Alerts are validated before they are submitted (a 400 stores nothing). Requests coalesce while a batch
 * of their tenant is in flight, or within one turn of the event loop; an idle tenant waits for nothing.
 */
export function createTriageIntake(deps: TriageIntakeDeps) {
  const group = new GroupCommit<NormalizedAlert, AcceptedAlerts>(
    async (tenantId, requests, release) => {
      // Backpressure before anything is stored, once per batch (a Redis round trip per request was a
      // tenth of the API's CPU under load); the same round trip reserves the job's fair place.
      const admitted = await deps.admit?.(tenantId);
      const all = requests.flat();
      const batchId = crypto.randomUUID();
      const inserted = await insertInboxAlerts(deps.db, tenantId, batchId, all);
      // Ids come from one sequence in the order of the rows: ascending ids are the alerts' order.
      const ids = inserted.map((r) => Number(r.id)).sort((x, y) => x - y);
      const hold = setTimeout(release, deps.holdMs ?? 1000);
      const result = await deps
        .enqueueAndWait(tenantId, batchId, ids, admitted)
        .finally(() => clearTimeout(hold));
      let decided: Map<number, TriageDecision> | undefined;
      if (result) {
        decided = new Map((result.decisions ?? []).map((d) => [d.inbox_id!, d]));
        // A retried job's result holds only what its last attempt decided: then read the batch back.
        if (ids.some((id) => !decided!.has(id)))
          decided = new Map((await batchDecisions(deps.db, tenantId, batchId)).map((d) => [d.inbox_id!, d]));
      }
      let at = 0;
      return requests.map((r) => {
        const mine = ids.slice(at, (at += r.length));
        const decisions = decided ? mine.map((id) => decided.get(id)) : [];
        const pending = !decided || decisions.some((d) => !d);
        return {
          accepted: r.length,
          batch_id: batchId,
          pending,
          events: pending
            ? []
            : decisions.map((d) => ({ id: d!.event_id, action: d!.action, incident_id: d!.incident_id })),
        };
      });
    },
    { maxItems: deps.maxItems, maxInFlight: deps.maxInFlight },
  );
  return {
    group,
    /** Takes validated alerts of one request into triage; resolves once they are decided (or pending). */
    submit: (tenantId: string, alerts: NormalizedAlert[]) => group.submit(tenantId, alerts),
  };
}

/**
 * The triage job for a posted batch: decides each alert not decided yet, in order, in one pass (a retry
 * goes on where the last attempt stopped: each decision is written with its inbox row, atomically).
 * `inboxIds`, when the job lists them, are the batch's rows; a job that finds all of them undecided knows
 * no earlier attempt opened an incident, and need not read the batch back.
 */
export async function processAlertBatch(
  deps: TriageDeps,
  tenantId: string,
  batchId: string,
  inboxIds?: number[],
) {
  const { rows, rules, latest } = await readBatch(deps, tenantId, batchId, inboxIds);
  const decisions = await decideBatch(
    deps,
    tenantId,
    rows.map((r) => ({ inboxId: Number(r.id), alert: r.alert as unknown as NormalizedAlert })),
    { rules, latest },
  );
  const counts: Record<string, number> = {};
  for (const d of decisions) counts[d.action] = (counts[d.action] ?? 0) + 1;
  // Every incident this batch opened, the ones an earlier try decided included: a job that stopped
  // between a decision's commit and its deliveries still announces it (once: deliveries are unique).
  if (deps.notify) {
    const firstTry = inboxIds !== undefined && rows.length === inboxIds.length;
    const all = firstTry ? decisions : await batchDecisions(deps.db, tenantId, batchId);
    await notifyIncidentsOpened(
      deps,
      tenantId,
      all.flatMap((d) => (d.action === 'incident_opened' && d.incident_id ? [d.incident_id] : [])),
    );
  }
  // The job's result carries the decisions (with their inbox ids), so the API need not read them back.
  return { batch_id: batchId, decided: rows.length, counts, decisions };
}

/**
 * What deciding a batch reads, in ONE statement: its undecided alerts (of `inboxIds`, when the job lists
 * them), the tenant's enabled rules (with the built-in ones after them) and the latest event of each of
 * the batch's fingerprints. Three reads cost three round trips and three statements per batch, a sixth of
 * the worker's and Postgres's CPU under load.
 */
async function readBatch(deps: TriageDeps, tenantId: string, batchId: string, inboxIds?: number[]) {
  const { inbox, rules, latest } = await readBatchState<
    NormalizedAlert,
    Omit<TriageRuleView, 'built_in'>,
    LatestEvent
  >(deps.db, tenantId, batchId, inboxIds);
  return { rows: inbox, rules: withBuiltInRules(deps, rules), latest };
}

/**
 * Queues `incident.opened` deliveries for incidents triage opened, after their decisions committed. Only
 * incidents still open are announced: an alert that had already ended opens its incident as history
 * (resolved at once), which pages nobody. Idempotent: deliveries are unique per notifier and incident.
 */
export async function notifyIncidentsOpened(deps: TriageDeps, tenantId: string, incidentIds: string[]) {
  if (!deps.notify || !incidentIds.length) return 0;
  const open = await findOpenTriageIncidents(deps.db, tenantId, incidentIds);
  let queued = 0;
  for (const i of open)
    queued += (
      await enqueueDeliveries(
        deps.db,
        deps.notify.producer,
        tenantId,
        'incident.opened',
        i.id,
        deps.notify.policy,
      )
    ).length;
  return queued;
}

/** The decisions of a batch, in the order its alerts came (pending ones are left out). */
export async function batchDecisions(db: Db, tenantId: string, batchId: string): Promise<TriageDecision[]> {
  const rows = await findBatchDecisions(db, tenantId, batchId);
  return rows.map((r) => ({
    inbox_id: Number(r.id),
    event_id: Number(r.event_id),
    action: r.action!,
    incident_id: r.incident_id ?? null,
  }));
}

/**
 * The triage job after a scan: the inventory's alert events not triaged yet, oldest first, each decided
 * once (its reference is written in the decision's transaction).
 */
export async function triageInventoryAlerts(deps: TriageDeps, tenantId: string) {
  const events = await findUntriagedInventoryAlerts(deps.db, tenantId);
  const counts: Record<string, number> = {};
  const opened: string[] = [];
  const rules = events.length ? await rulesFor(deps, tenantId) : [];
  for (const e of events) {
    const d = await decideAlert(
      deps,
      tenantId,
      normalizeInventoryAlert(e),
      { ref: `inventory:${e.id}` },
      rules,
    );
    counts[d.action] = (counts[d.action] ?? 0) + 1;
    if (d.action === 'incident_opened' && d.incident_id) opened.push(d.incident_id);
  }
  await notifyIncidentsOpened(deps, tenantId, opened);
  return { decided: events.length, ...counts };
}

/** Triage events, newest first, each with its resource as a graph node. */
export async function listTriageEvents(db: Db, tenantId: string, limit: number) {
  const rows = await findTriageEvents(db, tenantId, limit);
  const nodes = await nodesByArn(
    db,
    tenantId,
    rows.flatMap((r) => (r.arn ? [r.arn] : [])),
  );
  return rows.map(({ arn, ...r }) => ({ ...r, id: Number(r.id), resource: (arn && nodes.get(arn)) || null }));
}

/** The pipeline over the last 24 hours, the alerts still open, and how many rules apply. */
export async function triageOverview(
  deps: Pick<TriageDeps, 'db' | 'dedupeWindowMinutes' | 'correlationWindowMinutes'>,
  tenantId: string,
) {
  const since = new Date(Date.now() - 24 * 3600_000);
  const [stats, open, rules, last] = await Promise.all([
    findPipelineStats(deps.db, tenantId, since),
    countOpenAlerts(deps.db, tenantId),
    countEnabledRules(deps.db, tenantId),
    findLastEventAt(deps.db, tenantId),
  ]);
  return {
    pipeline: stats,
    open_alerts: open.n,
    rules: rules.n + builtInRules(deps).length,
    last_event_at: last.at ? new Date(last.at).toISOString() : null,
  };
}

/** The rules that apply to a tenant: its own first, then the built-in ones. */
export async function listTriageRules(
  deps: Pick<TriageDeps, 'db' | 'dedupeWindowMinutes' | 'correlationWindowMinutes'>,
  tenantId: string,
) {
  const own = await findTenantRules(deps.db, tenantId);
  return [...own.map((r) => ({ ...r, built_in: false })), ...builtInRules(deps)];
}
