import { CompiledQuery, type InferResult } from 'kysely';
import { sql, type Db, type Role, type TokenScope, type Tier, type User } from '@opsi/db';

export const TENANT_COLUMNS = [
  'id',
  'slug',
  'name',
  'tier',
  'timezone',
  'daily_agent_budget',
  'created_at',
  'updated_at',
  'deleted_at',
] as const;

export const USER_COLUMNS = ['id', 'tenant_id', 'email', 'name', 'role', 'created_at', 'deleted_at'] as const;

const TOKEN_METADATA_COLUMNS = [
  'id',
  'name',
  'scope',
  'token_hint',
  'created_at',
  'expires_at',
  'last_used_at',
  'revoked_at',
] as const;

// Tenants

/** Any tenant (live or deleted) holding this slug. */
export function findTenantIdBySlug(db: Db, slug: string) {
  return db.selectFrom('tenants').select('id').where('slug', '=', slug).executeTakeFirst();
}

export function insertTenant(
  db: Db,
  row: { slug: string; name: string; tier: Tier; timezone: string; daily_agent_budget?: number },
) {
  return db.insertInto('tenants').values(row).returning(TENANT_COLUMNS).executeTakeFirstOrThrow();
}

export function findLiveTenantBySlug(db: Db, slug: string) {
  return db
    .selectFrom('tenants')
    .select(TENANT_COLUMNS)
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export function findLiveTenants(db: Db) {
  return db
    .selectFrom('tenants')
    .select(['id', 'slug', 'timezone'])
    .where('deleted_at', 'is', null)
    .orderBy('slug')
    .execute();
}

/** Applies the changes (and updated_at now) to the live tenant with this slug. */
export function updateLiveTenant(
  tx: Db,
  slug: string,
  changes: { name?: string; tier?: Tier; timezone?: string },
) {
  return tx
    .updateTable('tenants')
    .set({ ...changes, updated_at: new Date() })
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .returning(TENANT_COLUMNS)
    .executeTakeFirst();
}

export function markTenantDeleted(tx: Db, slug: string) {
  return tx
    .updateTable('tenants')
    .set({ deleted_at: new Date(), updated_at: new Date() })
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .returning(TENANT_COLUMNS)
    .executeTakeFirst();
}

export function updateTenantDailyAgentBudget(db: Db, slug: string, daily: number) {
  return db
    .updateTable('tenants')
    .set({ daily_agent_budget: daily, updated_at: new Date() })
    .where('slug', '=', slug)
    .returning(TENANT_COLUMNS)
    .executeTakeFirst();
}

// Users

export function insertUser(
  db: Db,
  row: { tenant_id: string; email: string; name: string; password_hash: string; role: Role },
) {
  return db.insertInto('users').values(row).returning(USER_COLUMNS).executeTakeFirstOrThrow();
}

export function findLiveUserRowByEmail(db: Db, email: string): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.trim().toLowerCase())
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export function markUserDeleted(tx: Db, tenantId: string, email: string) {
  return tx
    .updateTable('users')
    .set({ deleted_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`lower(email)`, '=', email.trim().toLowerCase())
    .where('deleted_at', 'is', null)
    .returning(USER_COLUMNS)
    .executeTakeFirst();
}

export function findTeamMembers(db: Db, tenantId: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'role', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

// Browser sessions

export async function insertBrowserSession(
  db: Db,
  row: { tenant_id: string; user_id: string; secret_hash: string; csrf_token: string; expires_at: Date },
) {
  await db.insertInto('browser_sessions').values(row).execute();
}

/** The live session with this secret hash, with its live user and tenant. */
export function findLiveBrowserSession(db: Db, secretHash: string) {
  return db
    .selectFrom('browser_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .innerJoin('tenants as n', 'n.id', 's.tenant_id')
    .select([
      's.id as session_id',
      's.csrf_token',
      's.expires_at',
      'u.id as user_id',
      'u.email',
      'u.name as user_name',
      'u.role',
      'n.id as tenant_id',
      'n.slug',
      'n.name as tenant_name',
      'n.tier',
      'n.timezone',
      'n.daily_agent_budget',
    ])
    .where('s.secret_hash', '=', secretHash)
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', new Date())
    .where('u.deleted_at', 'is', null)
    .where('n.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function markBrowserSessionEnded(db: Db, sessionId: string) {
  await db
    .updateTable('browser_sessions')
    .set({ ended_at: new Date() })
    .where('id', '=', sessionId)
    .where('ended_at', 'is', null)
    .execute();
}

// API tokens

/** `expiresInDays` counts from the database clock, like created_at, so the two never disagree. */
export function tokenExpiry(expiresInDays: number | undefined) {
  return expiresInDays === undefined ? null : sql<Date>`now() + make_interval(days => ${expiresInDays})`;
}

export function insertApiToken(
  tx: Db,
  row: {
    tenant_id: string;
    user_id: string;
    name: string;
    scope: TokenScope;
    token_hash: string;
    token_hint: string;
    expires_at: ReturnType<typeof tokenExpiry>;
  },
) {
  return tx
    .insertInto('api_tokens')
    .values(row)
    .returning(['id', 'name', 'scope', 'token_hint', 'created_at', 'expires_at'])
    .executeTakeFirstOrThrow();
}

export function findUserTokens(db: Db, tenantId: string, userId: string) {
  return db
    .selectFrom('api_tokens')
    .select(TOKEN_METADATA_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** One of a user's tokens, its row locked for the transaction. */
export function findUserTokenForUpdate(tx: Db, tenantId: string, userId: string, tokenId: string) {
  return tx
    .selectFrom('api_tokens')
    .select(['id', 'name', 'revoked_at'])
    .where('id', '=', tokenId)
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

export async function markTokenRevoked(tx: Db, tokenId: string) {
  await tx.updateTable('api_tokens').set({ revoked_at: new Date() }).where('id', '=', tokenId).execute();
}

/** Sets the token's expiry to now unless it already lapsed. */
export function markTokenExpired(tx: Db, tokenId: string) {
  return tx
    .updateTable('api_tokens')
    .set({ expires_at: sql<Date>`least(coalesce(expires_at, now()), now())` })
    .where('id', '=', tokenId)
    .returning([...TOKEN_METADATA_COLUMNS, 'tenant_id'])
    .executeTakeFirst();
}

export async function markTokenUsed(db: Db, tokenId: string, at: Date) {
  await db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', tokenId).execute();
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

export type TokenRow = InferResult<ReturnType<typeof tokenQuery>>[number];

/**
 * The lookup runs on every authenticated request, so its SQL is built once per database handle and
 * number of hashes (Kysely's building and compiling was the largest item of our own code in the API's
 * profile), then run with the hashes, its only parameters.
 */
const compiledTokenQueries = new WeakMap<Db, Map<number, string>>();

/** The tokens with these hashes, with their users and tenants. */
export function findTokensByHash(db: Db, hashes: string[]): Promise<TokenRow[]> {
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
