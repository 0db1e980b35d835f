import { randomBytes } from 'node:crypto';
import type { Db } from '@opsi/db';
import type { Auth } from '../context';
import { Unauthorized } from '../errors';
import { verifyPassword } from './passwords';
import { findLiveBrowserSession, insertBrowserSession, markBrowserSessionEnded } from './repository';
import { hashSecret } from './tokens';
import { findLiveUserByEmail } from './users';

export const SESSION_COOKIE = 'opsi_session';

/** Checks email and password and opens a browser session. Wrong email or password: the same 401. */
export async function login(db: Db, email: string, password: string, ttlHours: number) {
  const user = await findLiveUserByEmail(db, email);
  const ok = await verifyPassword(user?.password_hash, password);
  if (!user || !ok) throw new Unauthorized('Wrong email or password.');
  const secret = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const expiresAt = new Date(Date.now() + ttlHours * 3_600_000);
  await insertBrowserSession(db, {
    tenant_id: user.tenant_id,
    user_id: user.id,
    secret_hash: hashSecret(secret),
    csrf_token: csrfToken,
    expires_at: expiresAt,
  });
  return { secret, expiresAt };
}

/** The live session behind a cookie value, or undefined (unknown, ended, expired, or user deleted). */
export async function resolveSession(
  db: Db,
  secret: string,
): Promise<Extract<Auth, { kind: 'session' }> | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  const row = await findLiveBrowserSession(db, hashSecret(secret));
  if (!row) return undefined;
  return {
    kind: 'session',
    tenant: {
      id: row.tenant_id,
      slug: row.slug,
      name: row.tenant_name,
      tier: row.tier,
      timezone: row.timezone,
      daily_agent_budget: row.daily_agent_budget,
    },
    user: { id: row.user_id, email: row.email, name: row.user_name, role: row.role },
    session: { id: row.session_id, csrf_token: row.csrf_token, expires_at: row.expires_at },
  };
}

/** Ends a browser session; idempotent. */
export async function logout(db: Db, sessionId: string): Promise<void> {
  await markBrowserSessionEnded(db, sessionId);
}
