import { sql, type Database, type Db, type TriageAction, type Transaction } from '@opsi/db';

/** Triage's SQL on its events (the alerts decided) and its advisory locks. */

type Tx = Db | Transaction<Database>;

/** What a decision records with it: its inbox row, or a reference (`inventory:<id>`), or nothing. */
type Book = { inboxId: number } | { ref: string } | undefined;

/** A transaction-scoped advisory lock on `key`. */
export async function lockAdvisory(tx: Tx, key: string) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(tx);
}

/**
 * Writes in-batch repeats (one chunk): marks their inbox rows (those not marked yet) and adds exactly
 * those to their events' counts, in one statement.
 */
export async function markRepeats(
  db: Tx,
  tenantId: string,
  chunk: Array<{ inboxId: number; eventId: number; at: Date; status: string }>,
) {
  const values = sql.join(
    chunk.map(
      (r) => sql`(${r.inboxId}::bigint, ${r.eventId}::bigint, ${r.at}::timestamptz, ${r.status}::text)`,
    ),
  );
  await sql`
      with x (inbox_id, event_id, at, status) as (values ${values}),
      b as (
        update triage_inbox i set event_id = x.event_id, action = 'deduplicated', processed_at = now()
        from x where i.id = x.inbox_id and i.tenant_id = ${tenantId} and i.processed_at is null
        returning x.inbox_id, x.event_id, x.at, x.status),
      g as (
        select event_id, count(*)::int as n, min(at) as first_at, max(at) as last_at,
          (array_agg(status order by inbox_id desc))[1] as status
        from b group by event_id)
      update triage_events e set count = e.count + g.n, first_at = least(e.first_at, g.first_at),
        last_at = greatest(e.last_at, g.last_at), status = g.status
      from g where e.id = g.event_id and e.tenant_id = ${tenantId}`.execute(db);
}

/**
 * Counts a repeat on the latest event of its fingerprint within the window, with the bookkeeping, in one
 * statement; an inbox row is counted only while undecided (its row lock taken first). Undefined when there
 * is no such event.
 */
export async function countRepeat(
  db: Tx,
  tenantId: string,
  a: { fingerprint: string; status: string },
  at: Date,
  windowMs: number,
  book: Book,
) {
  const ofInbox = book && 'inboxId' in book;
  const bookkeeping = ofInbox
    ? sql`, b as (update triage_inbox set event_id = d.id, action = 'deduplicated', processed_at = now() from d where triage_inbox.id = ${book.inboxId})`
    : book
      ? sql`, b as (insert into triage_refs (tenant_id, ref, event_id) select ${tenantId}, ${book.ref}, d.id from d)`
      : sql``;
  // An inbox row is counted only while it is undecided: its row lock is taken first, and a concurrent
  // attempt that decided it meanwhile leaves nothing to count (the lock's re-check sees processed_at).
  const undecided = ofInbox
    ? sql`u as (select id from triage_inbox where id = ${book.inboxId} and tenant_id = ${tenantId} and processed_at is null for update), `
    : sql``;
  const onlyUndecided = ofInbox ? sql`and exists (select 1 from u)` : sql``;
  const rows = await sql<{ id: string; incident_id: string | null; first_at: Date; last_at: Date }>`
    with ${undecided}d as (
      update triage_events set count = count + 1, last_at = greatest(last_at, ${at}), first_at = least(first_at, ${at}),
        status = ${a.status}
      where id = (
        select id from triage_events
        where tenant_id = ${tenantId} and fingerprint = ${a.fingerprint}
          and last_at >= ${new Date(at.getTime() - windowMs)} and first_at <= ${new Date(at.getTime() + windowMs)}
        order by last_at desc limit 1) ${onlyUndecided}
      returning id, incident_id, first_at, last_at)${bookkeeping}
    select id, incident_id, first_at, last_at from d`.execute(db);
  return rows.rows[0];
}

/** Counts a resolution on the latest event of the fingerprint when it is firing, which becomes resolved. */
export function resolveLatestFiringEvent(tx: Tx, tenantId: string, fingerprint: string, at: Date) {
  return tx
    .updateTable('triage_events')
    .set({
      status: 'resolved',
      count: sql<number>`count + 1`,
      last_at: sql<Date>`greatest(last_at, ${at})`,
    })
    .where(
      'id',
      '=',
      tx
        .selectFrom('triage_events')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('fingerprint', '=', fingerprint)
        .orderBy('last_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1),
    )
    .where('status', '=', 'firing')
    .returning(['id', 'incident_id', 'first_at', 'last_at', 'title'])
    .executeTakeFirst();
}

export function insertTriageEvent(
  tx: Tx,
  v: {
    tenantId: string;
    source: string;
    fingerprint: string;
    title: string;
    severity: string;
    arn: string | null;
    action: TriageAction;
    incidentId: string | null;
    at: Date;
    status: string;
    labels: string;
  },
) {
  return tx
    .insertInto('triage_events')
    .values({
      tenant_id: v.tenantId,
      source: v.source,
      fingerprint: v.fingerprint,
      title: v.title,
      severity: v.severity,
      arn: v.arn,
      action: v.action,
      incident_id: v.incidentId,
      first_at: v.at,
      last_at: v.at,
      status: v.status,
      labels: v.labels,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export function markTriageEventResolved(tx: Tx, eventId: number) {
  return tx.updateTable('triage_events').set({ status: 'resolved' }).where('id', '=', eventId).execute();
}

/** An event of `fingerprint` attached to one of the incidents, if any. */
export function findIncidentWithFingerprint(
  tx: Tx,
  tenantId: string,
  fingerprint: string,
  incidentIds: string[],
) {
  return tx
    .selectFrom('triage_events')
    .select('incident_id')
    .where('tenant_id', '=', tenantId)
    .where('fingerprint', '=', fingerprint)
    .where('incident_id', 'in', incidentIds)
    .limit(1)
    .executeTakeFirst();
}

/** Triage events, newest first. */
export function findTriageEvents(db: Tx, tenantId: string, limit: number) {
  return db
    .selectFrom('triage_events')
    .select([
      'id',
      'at',
      'source',
      'fingerprint',
      'title',
      'severity',
      'arn',
      'action',
      'incident_id',
      'count',
      'first_at',
      'last_at',
      'status',
    ])
    .where('tenant_id', '=', tenantId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export function findPipelineStats(db: Tx, tenantId: string, since: Date) {
  return db
    .selectFrom('triage_events')
    .select([
      sql<number>`coalesce(sum(count), 0)::int`.as('received'),
      sql<number>`coalesce(sum(count - 1), 0)::int`.as('deduplicated'),
      sql<number>`coalesce(sum(count) filter (where action = 'suppressed'), 0)::int`.as('suppressed'),
      sql<number>`count(*) filter (where action = 'correlated')::int`.as('correlated'),
      sql<number>`count(*) filter (where action = 'incident_opened')::int`.as('incidents_opened'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('at', '>=', since)
    .executeTakeFirstOrThrow();
}

/** Alerts still firing, not suppressed, on no incident or on one not resolved. */
export function countOpenAlerts(db: Tx, tenantId: string) {
  return db
    .selectFrom('triage_events as t')
    .leftJoin('incidents as i', 'i.id', 't.incident_id')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('t.tenant_id', '=', tenantId)
    .where('t.status', '=', 'firing')
    .where('t.action', '<>', 'suppressed')
    .where((eb) => eb.or([eb('i.id', 'is', null), eb('i.status', '<>', 'resolved')]))
    .executeTakeFirstOrThrow();
}

export function countEnabledRules(db: Tx, tenantId: string) {
  return db
    .selectFrom('triage_rules')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('tenant_id', '=', tenantId)
    .where('enabled', '=', true)
    .executeTakeFirstOrThrow();
}

export function findLastEventAt(db: Tx, tenantId: string) {
  return db
    .selectFrom('triage_events')
    .select(sql<Date | null>`max(at)`.as('at'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
}
