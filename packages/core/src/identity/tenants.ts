import type { Db, Tenant, Tier } from '@opsi/db';
import { appendAudit } from '../audit';
import { BadRequest, Conflict, NotFound } from '../errors';
import {
  findLiveTenantBySlug,
  findLiveTenants,
  findTenantIdBySlug,
  insertTenant,
  markTenantDeleted,
  updateLiveTenant,
  updateTenantDailyAgentBudget,
} from './repository';

export { TENANT_COLUMNS } from './repository';

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export interface CreateTenantInput {
  slug: string;
  name?: string;
  tier?: Tier;
  timezone?: string;
  dailyAgentBudget?: number;
}

/** Creates a tenant; a taken slug is a 409, a bad slug or timezone a 400. */
export async function createTenant(db: Db, input: CreateTenantInput): Promise<Tenant> {
  if (!SLUG.test(input.slug)) {
    throw new BadRequest('slug must be 2-63 characters of a-z, 0-9 and -, starting with a letter or digit');
  }
  const timezone = input.timezone ?? 'UTC';
  if (!isValidTimeZone(timezone)) throw new BadRequest(`unknown timezone: ${timezone}`);
  const existing = await findTenantIdBySlug(db, input.slug);
  if (existing)
    throw new Conflict(`tenant ${input.slug} already exists (slugs of deleted tenants stay taken)`);
  return insertTenant(db, {
    slug: input.slug,
    name: input.name ?? input.slug,
    tier: input.tier ?? 'free',
    timezone,
    ...(input.dailyAgentBudget !== undefined ? { daily_agent_budget: input.dailyAgentBudget } : {}),
  });
}

/** The live (not deleted) tenant with this slug. */
export function findTenantBySlug(db: Db, slug: string) {
  return findLiveTenantBySlug(db, slug);
}

/** Every live tenant, for the scheduler. */
export function listLiveTenants(db: Db) {
  return findLiveTenants(db);
}

export interface UpdateTenantInput {
  name?: string | undefined;
  tier?: Tier | undefined;
  timezone?: string | undefined;
}

/** Operator: changes a tenant's name, tier or timezone (the scheduler follows a timezone change). */
export async function updateTenant(db: Db, slug: string, input: UpdateTenantInput) {
  if (input.timezone !== undefined && !isValidTimeZone(input.timezone)) {
    throw new BadRequest(`unknown timezone: ${input.timezone}`);
  }
  const changes = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  if (Object.keys(changes).length === 0)
    throw new BadRequest('nothing to change: give --name, --tier or --timezone');
  return db.transaction().execute(async (tx) => {
    const tenant = await updateLiveTenant(tx, slug, changes);
    if (!tenant) throw new NotFound(`no tenant ${slug}`);
    await appendAudit(tx, tenant.id, {
      actor: { type: 'operator', id: null },
      action: 'tenant.updated',
      target_type: 'tenant',
      target_id: tenant.id,
      details: changes,
    });
    return tenant;
  });
}

/**
 * Operator: deletes a tenant. Its rows stay (the audit log is append-only), but every token and session
 * of it stops working at once and the scheduler drops its schedules.
 */
export async function deleteTenant(db: Db, slug: string) {
  return db.transaction().execute(async (tx) => {
    const tenant = await markTenantDeleted(tx, slug);
    if (!tenant) throw new NotFound(`no tenant ${slug}`);
    await appendAudit(tx, tenant.id, {
      actor: { type: 'operator', id: null },
      action: 'tenant.deleted',
      target_type: 'tenant',
      target_id: tenant.id,
      details: { slug: tenant.slug },
    });
    return tenant;
  });
}

export async function getTenantBySlug(db: Db, slug: string) {
  const tenant = await findTenantBySlug(db, slug);
  if (!tenant) throw new NotFound(`no tenant ${slug}`);
  return tenant;
}

/** Sets a tenant's daily agent budget (units per token per UTC day); operator only. */
export async function setDailyAgentBudget(db: Db, slug: string, daily: number): Promise<Tenant> {
  if (!Number.isInteger(daily) || daily < 0) throw new BadRequest('--daily must be a whole number >= 0');
  const tenant = await updateTenantDailyAgentBudget(db, slug, daily);
  if (!tenant) throw new NotFound(`no tenant ${slug}`);
  return tenant;
}
