import { CompiledQuery } from 'kysely';
import type { ConversationMessage } from '@opsi/agent';
import type { RunEvent } from '@opsi/contracts';
import { sql, type Database, type Db, type Transaction } from '@opsi/db';

/** The pool, or the transaction a statement must run in. */
type Tx = Db | Transaction<Database>;

const SESSION_COLUMNS = ['id', 'name', 'created_at', 'updated_at'] as const;

// ---- agent_sessions and agent_messages ---------------------------------------------------------

export function findSession(db: Tx, tenantId: string, id: string) {
  return db
    .selectFrom('agent_sessions')
    .select([...SESSION_COLUMNS, 'tenant_id'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function insertSession(
  db: Tx,
  values: { id: string; tenant_id: string; created_by: string; name: string },
) {
  return db.insertInto('agent_sessions').values(values).returning(SESSION_COLUMNS).executeTakeFirstOrThrow();
}

/** The tenant's sessions, most recently active first (at most 500). */
export function findSessions(db: Tx, tenantId: string) {
  return db
    .selectFrom('agent_sessions')
    .select(SESSION_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .orderBy('updated_at', 'desc')
    .orderBy('id')
    .limit(500)
    .execute();
}

export function updateSessionName(db: Tx, tenantId: string, id: string, name: string) {
  return db
    .updateTable('agent_sessions')
    .set({ name, updated_at: new Date() })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
}

/** The session's messages, oldest first. */
export function findMessages(db: Tx, tenantId: string, sessionId: string) {
  return db
    .selectFrom('agent_messages')
    .select(['id', 'role', 'content', 'created_at', 'run_id'])
    .where('tenant_id', '=', tenantId)
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('role', 'desc') // a user message and its reply never share an instant, but if they do: user first
    .execute();
}

/** Whether another tenant holds a session of this id. */
export function findSessionElsewhere(db: Tx, sessionId: string, tenantId: string) {
  return db
    .selectFrom('agent_sessions')
    .select('tenant_id')
    .where('id', '=', sessionId)
    .where('tenant_id', '<>', tenantId)
    .limit(1)
    .executeTakeFirst();
}

export function deleteSessionRow(db: Tx, tenantId: string, sessionId: string) {
  return db
    .deleteFrom('agent_sessions')
    .where('id', '=', sessionId)
    .where('tenant_id', '=', tenantId)
    .execute();
}

// ---- agent_runs --------------------------------------------------------------------------------

/**
 * The session (created, or touched when it exists), the run and its prompt, in one statement: atomic
 * without an explicit transaction.
 */
export async function insertRunWithSession(
  db: Tx,
  v: {
    sessionId: string;
    tenantId: string;
    userId: string;
    name: string;
    incidentId: string | null;
    tokenId: string | null;
    prompt: string;
    selectedTools: string[] | null;
    purpose: string | null;
  },
) {
  const created = await sql<{ id: string; session_id: string }>`
      with s as (
        insert into agent_sessions (id, tenant_id, created_by, name, incident_id)
        values (${v.sessionId}, ${v.tenantId}, ${v.userId}, ${v.name}, ${v.incidentId}::uuid)
        on conflict (tenant_id, id) do update set updated_at = now()
        returning id
      ), r as (
        insert into agent_runs (tenant_id, session_id, token_id, prompt, selected_tools, incident_id, purpose)
        select ${v.tenantId}, s.id, ${v.tokenId}::uuid, ${v.prompt}, ${v.selectedTools}::text[],
          ${v.incidentId}::uuid, ${v.purpose} from s
        returning id, session_id
      ), m as (
        insert into agent_messages (tenant_id, session_id, run_id, role, content)
        select ${v.tenantId}, r.session_id, r.id, 'user', ${v.prompt} from r
      )
      select id, session_id from r`.execute(db);
  return created.rows[0]!;
}

/** A run's terminal event in its row, unless the row already ended. */
export function markRunFinished(db: Tx, runId: string, terminal: RunEvent) {
  const completed = terminal.kind === 'run.completed';
  return db
    .updateTable('agent_runs')
    .set({
      status: completed ? 'completed' : 'failed',
      reply: completed ? String(terminal.reply) : null,
      error: completed ? null : String(terminal.detail),
      last_seq: terminal.seq,
      terminal_event: JSON.stringify(terminal),
      finished_at: new Date(),
    })
    .where('id', '=', runId)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}

export function findLatestRunOfSession(db: Tx, tenantId: string, sessionId: string) {
  return db
    .selectFrom('agent_runs')
    .select(['id', 'status', 'last_seq', 'terminal_event'])
    .where('tenant_id', '=', tenantId)
    .where('session_id', '=', sessionId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function findOpenRunsOfSession(db: Tx, tenantId: string, sessionId: string) {
  return db
    .selectFrom('agent_runs')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('session_id', '=', sessionId)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}

/** Raises the run's seq reservation to `upTo` (never lowers it). */
export function reserveRunSeqs(db: Tx, runId: string, upTo: number) {
  return db
    .updateTable('agent_runs')
    .set((eb) => ({ seq_reserved: eb.fn('greatest', ['seq_reserved', eb.val(upTo)]) }))
    .where('id', '=', runId)
    .execute();
}

export function findTerminalEvent(db: Tx, runId: string) {
  return db.selectFrom('agent_runs').select('terminal_event').where('id', '=', runId).executeTakeFirst();
}

/** A run's row as executeRun reads it, with the incident its session is bound to. */
export interface RunRow {
  id: string;
  tenant_id: string;
  session_id: string;
  status: string;
  prompt: string;
  selected_tools: string[] | null;
  last_seq: number;
  seq_reserved: number;
  created_at: Date;
  incident_id: string | null;
  purpose: string | null;
  session_incident_id: string | null;
}

export function findRun(db: Tx, runId: string): Promise<RunRow | undefined> {
  return db
    .selectFrom('agent_runs as r')
    .leftJoin('agent_sessions as s', (j) =>
      j.onRef('s.tenant_id', '=', 'r.tenant_id').onRef('s.id', '=', 'r.session_id'),
    )
    .select([
      'r.id',
      'r.tenant_id',
      'r.session_id',
      'r.status',
      'r.prompt',
      'r.selected_tools',
      'r.last_seq',
      'r.seq_reserved',
      'r.created_at',
      'r.incident_id',
      'r.purpose',
      's.incident_id as session_incident_id',
    ])
    .where('r.id', '=', runId)
    .executeTakeFirst();
}

/**
 * Marks a queued or running run running and reserves `block` seqs above every one known, answering
 * the row as it was before and the reservation made (see claimRun).
 */
export async function markRunClaimed(
  db: Tx,
  runId: string,
  attempt: number,
  knownSeq: number,
  block: number,
): Promise<(RunRow & { reserved_to: number }) | undefined> {
  const { rows } = await sql<RunRow & { reserved_to: number }>`
    with prev as (
      select id, status, last_seq, seq_reserved from agent_runs where id = ${runId} for update
    )
    update agent_runs r
    set status = 'running', attempts = ${attempt}, started_at = coalesce(r.started_at, ${new Date()}),
      seq_reserved = greatest(prev.seq_reserved, prev.last_seq, ${knownSeq}::int) + ${block}::int
    from prev
    where r.id = prev.id and prev.status in ('queued', 'running')
    returning r.id, r.tenant_id, r.session_id, prev.status, r.prompt, r.selected_tools, prev.last_seq,
      prev.seq_reserved, r.created_at, r.incident_id, r.purpose, r.seq_reserved as reserved_to,
      (select s.incident_id from agent_sessions s
        where s.tenant_id = r.tenant_id and s.id = r.session_id) as session_incident_id`.execute(db);
  return rows[0];
}

/**
 * What a turn reads before the engine runs, in one statement (one round trip and one Postgres statement
 * instead of two, on every turn): the session's earlier messages, oldest first, without this run's own
 * prompt; and the tenant's newest active learnings (`limit` of them, newest first, as listLearnings
 * orders them). Fixed SQL text: nothing to build per turn.
 */
const TURN_CONTEXT_SQL = `select
  coalesce((select json_agg(json_build_object('role', m.role, 'content', m.content) order by m.created_at)
    from agent_messages m
    where m.tenant_id = $1 and m.session_id = $2 and (m.run_id is null or m.run_id <> $3)
      and m.created_at <= $4), '[]'::json) as history,
  coalesce((select json_agg(json_build_object('id', l.id, 'fact', l.fact, 'service', l.service)
      order by l.created_at desc, l.id)
    from (select id, fact, service, created_at from learnings
      where tenant_id = $1 and status = 'active' order by created_at desc, id limit $5) l), '[]'::json)
    as learnings`;

export async function findTurnContext(
  db: Tx,
  tenantId: string,
  sessionId: string,
  runId: string,
  createdAt: Date,
  learningsLimit: number,
) {
  const { rows } = await db.executeQuery<{
    history: ConversationMessage[];
    learnings: Array<{ id: string; fact: string; service: string | null }>;
  }>(CompiledQuery.raw(TURN_CONTEXT_SQL, [tenantId, sessionId, runId, createdAt, learningsLimit]));
  return rows[0]!;
}

/** Checkpoint of the last seq a run recorded (never goes back). */
export function markRunCheckpoint(db: Tx, runId: string, seq: number) {
  return db
    .updateTable('agent_runs')
    .set({ last_seq: seq })
    .where('id', '=', runId)
    .where('last_seq', '<', seq)
    .execute();
}

/** The checkpoint of message.completed and the reply, in one statement (one round trip, not two). */
export function insertReply(
  db: Tx,
  v: { tenantId: string; sessionId: string; runId: string; seq: number; reply: string },
) {
  return sql`
      with checkpoint as (
        update agent_runs set last_seq = ${v.seq}::int
        where id = ${v.runId} and last_seq < ${v.seq}::int
      )
      insert into agent_messages (tenant_id, session_id, run_id, role, content)
      values (${v.tenantId}, ${v.sessionId}, ${v.runId}, 'assistant', ${v.reply})
      on conflict (run_id) where role = 'assistant' do nothing`.execute(db);
}

/** Queued or running runs created before `before`, oldest first. */
export function findOpenRunsBefore(db: Tx, before: Date, limit: number) {
  return db
    .selectFrom('agent_runs')
    .select(['id', 'last_seq', 'seq_reserved', 'tenant_id', 'session_id', 'incident_id', 'purpose'])
    .where('status', 'in', ['queued', 'running'])
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}
