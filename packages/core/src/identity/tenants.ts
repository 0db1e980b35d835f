import type { Db, Tenant, Tier } from '@opsi/db';
import { BadRequest, Conflict, NotFound } from '../errors';

export const TENANT_COLUMNS = [
  'id',
  'slug',
  'name',
  'tier',
  'timezone',
  'daily_agent_budget',
  'created_at',
  'updated_at',
] as const;

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
  const existing = await findTenantBySlug(db, input.slug);
  if (existing) throw new Conflict(`tenant ${input.slug} already exists`);
  return db
    .insertInto('tenants')
    .values({
      slug: input.slug,
      name: input.name ?? input.slug,
      tier: input.tier ?? 'free',
      timezone,
      ...(input.dailyAgentBudget !== undefined ? { daily_agent_budget: input.dailyAgentBudget } : {}),
    })
    .returning(TENANT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function findTenantBySlug(db: Db, slug: string): Promise<Tenant | undefined> {
  return db.selectFrom('tenants').select(TENANT_COLUMNS).where('slug', '=', slug).executeTakeFirst();
}

export async function getTenantBySlug(db: Db, slug: string): Promise<Tenant> {
  const tenant = await findTenantBySlug(db, slug);
  if (!tenant) throw new NotFound(`no tenant ${slug}`);
  return tenant;
}

/** Sets a tenant's daily agent budget (units per token per UTC day); operator only. */
export async function setDailyAgentBudget(db: Db, slug: string, daily: number): Promise<Tenant> {
  if (!Number.isInteger(daily) || daily < 0) throw new BadRequest('--daily must be a whole number >= 0');
  const tenant = await db
    .updateTable('tenants')
    .set({ daily_agent_budget: daily, updated_at: new Date() })
    .where('slug', '=', slug)
    .returning(TENANT_COLUMNS)
    .executeTakeFirst();
  if (!tenant) throw new NotFound(`no tenant ${slug}`);
  return tenant;
}
