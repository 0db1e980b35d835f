import { createHash, randomBytes } from 'node:crypto';
import { type Db, type TokenScope } from '@opsi/db';
import { appendAudit } from '../audit';
import type { Auth, AuthTenant, AuthUser } from '../context';
import { BadRequest, Forbidden, NotFound } from '../errors';
import { GroupCommit } from '../group-commit';
import {
  findTokensByHash,
  findUserTokenForUpdate,
  findUserTokens,
  insertApiToken,
  markTokenExpired,
  markTokenRevoked,
  markTokenUsed,
  tokenExpiry,
  type TokenRow,
} from './repository';

export const TOKEN_PREFIX = 'opsi_';
/** `opsi_` then 43 URL-safe characters: 32 random bytes, base64url without padding. */
export const TOKEN_PATTERN = /^opsi_[A-Za-z0-9_-]{43}$/;

/** Only this digest is stored; the secret exists once, in the mint response. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function generateToken(): { token: string; hint: string; hash: string } {
  const body = randomBytes(32).toString('base64url');
  const token = `${TOKEN_PREFIX}${body}`;
  return { token, hint: `${TOKEN_PREFIX}${body.slice(0, 8)}`, hash: hashSecret(token) };
}

export interface MintTokenInput {
  name: string;
  scope: TokenScope;
  expiresInDays?: number | undefined;
}

/** Mints a token for the session's user, recording the mint in the audit log in the same transaction. */
export async function mintToken(db: Db, auth: Auth, input: MintTokenInput) {
  if (auth.kind !== 'session')
    throw new Forbidden('A token cannot mint a token: sign in with a browser session.');
  if (input.scope === 'read_write' && auth.user.role === 'viewer') {
    throw new Forbidden('A viewer can mint read tokens only.');
  }
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) throw new BadRequest('name must be 1 to 100 characters');
  const { token, hint, hash } = generateToken();
  // From the database clock, like created_at, so the two never disagree.
  const expiresAt = tokenExpiry(input.expiresInDays);
  return db.transaction().execute(async (tx) => {
    const row = await insertApiToken(tx, {
      tenant_id: auth.tenant.id,
      user_id: auth.user.id,
      name,
      scope: input.scope,
      token_hash: hash,
      token_hint: hint,
      expires_at: expiresAt,
    });
    await appendAudit(tx, auth.tenant.id, {
      actor: { type: 'user', id: auth.user.id, email: auth.user.email },
      action: 'token.minted',
      target_type: 'api_token',
      target_id: row.id,
      details: { name: row.name, scope: row.scope, expires_at: row.expires_at?.toISOString() ?? null },
    });
    return { ...row, token };
  });
}

/** Metadata of the caller's own tokens, newest first; never the secret or its hash. */
export function listTokens(db: Db, auth: Auth) {
  return findUserTokens(db, auth.tenant.id, auth.user.id);
}

/**
 * Revokes one of the caller's tokens (a token may revoke itself). Another user's or tenant's token is a
 * 404, the same as one that does not exist. Revoking an already revoked token changes nothing.
 */
export async function revokeToken(db: Db, auth: Auth, tokenId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const token = await findUserTokenForUpdate(tx, auth.tenant.id, auth.user.id, tokenId);
    if (!token) throw new NotFound('No such token.');
    if (token.revoked_at) return;
    await markTokenRevoked(tx, token.id);
    await appendAudit(tx, auth.tenant.id, {
      actor: {
        type: 'user',
        id: auth.user.id,
        email: auth.user.email,
        token_id: auth.kind === 'token' ? auth.token.id : null,
      },
      action: 'token.revoked',
      target_type: 'api_token',
      target_id: token.id,
      details: { name: token.name, self: auth.kind === 'token' && auth.token.id === token.id },
    });
  });
}

/**
 * Operator: ends a token's life now by setting its expiry, so it reads as expired, not revoked.
 * Recorded in the tenant's audit log with the operator as actor.
 */
export async function expireToken(db: Db, tokenId: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tokenId)) {
    throw new NotFound(`no token ${tokenId}`);
  }
  return db.transaction().execute(async (tx) => {
    const row = await markTokenExpired(tx, tokenId);
    if (!row) throw new NotFound(`no token ${tokenId}`);
    await appendAudit(tx, row.tenant_id, {
      actor: { type: 'operator', id: null },
      action: 'token.expired',
      target_type: 'api_token',
      target_id: row.id,
      details: { name: row.name, expires_at: row.expires_at?.toISOString() ?? null },
    });
    const { tenant_id: _tenant, ...metadata } = row;
    return metadata;
  });
}

export type TokenRejection =
  'malformed' | 'unknown' | 'revoked' | 'expired' | 'user_deleted' | 'tenant_deleted';

// Writing last_used_at on every request would turn each read into a write; a minute's precision is enough.
const LAST_USED_PRECISION_SECONDS = 60;

/**
 * Token lookups, coalesced (group commit): lookups that arrive while one is running go together as one
 * query when it ends. Each lookup is still read from the database after its request arrived (no cache),
 * so a revocation takes effect on the very next request; under load, 50 concurrent requests cost one or
 * two queries instead of 50 connections' worth.
 */
const lookups = new WeakMap<Db, GroupCommit<string, TokenRow | undefined>>();

function tokenLookups(db: Db) {
  let g = lookups.get(db);
  if (!g) {
    g = new GroupCommit<string, TokenRow | undefined>(
      async (_key, requests) => {
        const rows = await findTokensByHash(db, [...new Set(requests.flat())]);
        const byHash = new Map(rows.map((r) => [r.token_hash, r]));
        return requests.map(([hash]) => byHash.get(hash!));
      },
      { maxItems: 500, maxInFlight: 2 },
    );
    lookups.set(db, g);
  }
  return g;
}

/**
 * Resolves a bearer token to its user and tenant, straight from the database on every request: no cache,
 * so a revocation or expiry takes effect on the very next request (concurrent lookups share a query that
 * starts after each of them arrived).
 */
export async function authenticateToken(
  db: Db,
  secret: string,
): Promise<{ ok: true; auth: Extract<Auth, { kind: 'token' }> } | { ok: false; reason: TokenRejection }> {
  if (!TOKEN_PATTERN.test(secret)) return { ok: false, reason: 'malformed' };
  const row = await tokenLookups(db).submit('tokens', [hashSecret(secret)]);
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at) return { ok: false, reason: 'revoked' };
  const now = Date.now();
  if (row.expires_at && row.expires_at.getTime() <= now) return { ok: false, reason: 'expired' };
  if (row.tenant_deleted_at) return { ok: false, reason: 'tenant_deleted' };
  if (row.deleted_at || row.user_tenant_id !== row.tenant_id) return { ok: false, reason: 'user_deleted' };
  if (!row.last_used_at || now - row.last_used_at.getTime() > LAST_USED_PRECISION_SECONDS * 1000) {
    await markTokenUsed(db, row.token_id, new Date(now));
  }
  const tenant: AuthTenant = {
    id: row.tenant_id,
    slug: row.slug,
    name: row.tenant_name,
    tier: row.tier,
    timezone: row.timezone,
    daily_agent_budget: row.daily_agent_budget,
  };
  const user: AuthUser = { id: row.user_id, email: row.email, name: row.user_name, role: row.role };
  return {
    ok: true,
    auth: {
      kind: 'token',
      tenant,
      user,
      token: { id: row.token_id, scope: row.scope, expires_at: row.expires_at },
    },
  };
}
