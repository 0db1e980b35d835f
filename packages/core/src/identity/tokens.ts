import { createHash, randomBytes } from 'node:crypto';
import { CompiledQuery, type InferResult } from 'kysely';
import { sql, type Db, type TokenScope } from '@opsi/db';
import { appendAudit } from '../audit';
import type { Auth, AuthTenant, AuthUser } from '../context';
import { BadRequest, Forbidden, NotFound } from '../errors';
import { GroupCommit } from '../group-commit';

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

const METADATA_COLUMNS = [
  'id',
  'name',
  'scope',
  'token_hint',
  'created_at',
  'expires_at',
  'last_used_at',
  'revoked_at',
] as const;

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
  const expiresAt =
    input.expiresInDays === undefined
      ? null
      : sql<Date>`now() + make_interval(days => ${input.expiresInDays})`;
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('api_tokens')
      .values({
        tenant_id: auth.tenant.id,
        user_id: auth.user.id,
        name,
        scope: input.scope,
        token_hash: hash,
        token_hint: hint,
        expires_at: expiresAt,
      })
      .returning(['id', 'name', 'scope', 'token_hint', 'created_at', 'expires_at'])
      .executeTakeFirstOrThrow();
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
  return db
    .selectFrom('api_tokens')
    .select(METADATA_COLUMNS)
    .where('tenant_id', '=', auth.tenant.id)
    .where('user_id', '=', auth.user.id)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/**
 * Revokes one of the caller's tokens (a token may revoke itself). Another user's or tenant's token is a
 * 404, the same as one that does not exist. Revoking an already revoked token changes nothing.
 */
export async function revokeToken(db: Db, auth: Auth, tokenId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const token = await tx
      .selectFrom('api_tokens')
      .select(['id', 'name', 'revoked_at'])
      .where('id', '=', tokenId)
      .where('tenant_id', '=', auth.tenant.id)
      .where('user_id', '=', auth.user.id)
      .forUpdate()
      .executeTakeFirst();
    if (!token) throw new NotFound('No such token.');
    if (token.revoked_at) return;
    await tx.updateTable('api_tokens').set({ revoked_at: new Date() }).where('id', '=', token.id).execute();
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
    const row = await tx
      .updateTable('api_tokens')
      .set({ expires_at: sql<Date>`least(coalesce(expires_at, now()), now())` })
      .where('id', '=', tokenId)
      .returning([...METADATA_COLUMNS, 'tenant_id'])
      .executeTakeFirst();
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
        const rows = await selectTokens(db, [...new Set(requests.flat())]);
        const byHash = new Map(rows.map((r) => [r.token_hash, r]));
        return requests.map(([hash]) => byHash.get(hash!));
      },
      { maxItems: 500, maxInFlight: 2 },
    );
    lookups.set(db, g);
  }
  return g;
}

function tokenQuery(db: Db, hashes: string[]) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('tenants as n', 'n.id', 't.tenant_id')
    .select([
      't.token_hash',
      't.id as token_id',
      't.scope',
      't.expires_at',
      't.revoked_at',
      't.last_used_at',
      'u.id as user_id',
      'u.email',
      'u.name as user_name',
      'u.role',
      'u.deleted_at',
      'u.tenant_id as user_tenant_id',
      'n.id as tenant_id',
      'n.slug',
      'n.name as tenant_name',
      'n.tier',
      'n.timezone',
      'n.daily_agent_budget',
      'n.deleted_at as tenant_deleted_at',
    ])
    .where('t.token_hash', 'in', hashes);
}

type TokenRow = InferResult<ReturnType<typeof tokenQuery>>[number];

/**
 * The lookup runs on every authenticated request, so its SQL is built once per database handle and
 * number of hashes (Kysely's building and compiling was the largest item of our own code in the API's
 * profile), then run with the hashes, its only parameters.
 */
const compiledTokenQueries = new WeakMap<Db, Map<number, string>>();

function selectTokens(db: Db, hashes: string[]): Promise<TokenRow[]> {
  let byCount = compiledTokenQueries.get(db);
  if (!byCount) compiledTokenQueries.set(db, (byCount = new Map()));
  let text = byCount.get(hashes.length);
  if (text === undefined) {
    const compiled = tokenQuery(db, hashes).compile();
    if (compiled.parameters.length !== hashes.length) throw new Error('token query: unexpected parameters');
    byCount.set(hashes.length, (text = compiled.sql));
  }
  return db.executeQuery<TokenRow>(CompiledQuery.raw(text, hashes)).then((r) => r.rows);
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
    await db
      .updateTable('api_tokens')
      .set({ last_used_at: new Date(now) })
      .where('id', '=', row.token_id)
      .execute();
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
