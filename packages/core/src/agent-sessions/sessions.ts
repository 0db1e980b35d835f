import { randomUUID } from 'node:crypto';
import type { Db } from '@opsi/db';
import type { Auth } from '../context';
import { NotFound } from '../errors';

const SESSION_COLUMNS = ['id', 'name', 'created_at', 'updated_at'] as const;

/**
 * A session of the tenant. Sessions are keyed by tenant and id: an id only another tenant uses is
 * unknown here (404), and free for this tenant to use.
 */
export async function getOwnSession(db: Db, tenantId: string, id: string) {
  const session = await db
    .selectFrom('agent_sessions')
    .select([...SESSION_COLUMNS, 'tenant_id'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!session) throw new NotFound('No such session.');
  return session;
}

/** Creates a named session with a generated id. */
export function createSession(db: Db, auth: Auth, name?: string) {
  return db
    .insertInto('agent_sessions')
    .values({
      id: randomUUID(),
      tenant_id: auth.tenant.id,
      created_by: auth.user.id,
      name: name ?? 'Untitled session',
    })
    .returning(SESSION_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** The tenant's sessions, most recently active first. */
export function listSessions(db: Db, tenantId: string) {
  return db
    .selectFrom('agent_sessions')
    .select(SESSION_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .orderBy('updated_at', 'desc')
    .orderBy('id')
    .limit(500)
    .execute();
}

export async function renameSession(db: Db, tenantId: string, id: string, name: string) {
  const session = await db
    .updateTable('agent_sessions')
    .set({ name, updated_at: new Date() })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
  if (!session) throw new NotFound('No such session.');
  return session;
}

/** The session's messages, oldest first. */
export async function getHistory(db: Db, tenantId: string, sessionId: string) {
  await getOwnSession(db, tenantId, sessionId);
  const messages = await db
    .selectFrom('agent_messages')
    .select(['id', 'role', 'content', 'created_at', 'run_id'])
    .where('tenant_id', '=', tenantId)
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('role', 'desc') // a user message and its reply never share an instant, but if they do: user first
    .execute();
  return { session_id: sessionId, messages };
}
