import { randomUUID } from 'node:crypto';
import type { Db } from '@opsi/db';
import type { Auth } from '../context';
import { NotFound } from '../errors';
import { findMessages, findSession, findSessions, insertSession, updateSessionName } from './repository';

/**
 * A session of the tenant. Sessions are keyed by tenant and id: an id only another tenant uses is
 * unknown here (404), and free for this tenant to use.
 */
export async function getOwnSession(db: Db, tenantId: string, id: string) {
  const session = await findSession(db, tenantId, id);
  if (!session) throw new NotFound('No such session.');
  return session;
}

/** Creates a named session with a generated id. */
export function createSession(db: Db, auth: Auth, name?: string) {
  return insertSession(db, {
    id: randomUUID(),
    tenant_id: auth.tenant.id,
    created_by: auth.user.id,
    name: name ?? 'Untitled session',
  });
}

/** The tenant's sessions, most recently active first. */
export function listSessions(db: Db, tenantId: string) {
  return findSessions(db, tenantId);
}

export async function renameSession(db: Db, tenantId: string, id: string, name: string) {
  const session = await updateSessionName(db, tenantId, id, name);
  if (!session) throw new NotFound('No such session.');
  return session;
}

/** The session's messages, oldest first. */
export async function getHistory(db: Db, tenantId: string, sessionId: string) {
  await getOwnSession(db, tenantId, sessionId);
  const messages = await findMessages(db, tenantId, sessionId);
  return { session_id: sessionId, messages };
}
