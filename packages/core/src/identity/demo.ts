import type { Db } from '@opsi/db';
import { createTenant, findTenantBySlug } from './tenants';
import { createUser, findLiveUserByEmail } from './users';

export const DEMO_TENANT = 'demo';
export const DEMO_EMAIL = 'demo@example.com';
export const DEMO_PASSWORD = 'demo-password';

/**
 * Creates tenant `demo` (tier team) and its owner demo@example.com / demo-password when they are missing.
 * Idempotent: running it again changes nothing and answers what exists.
 */
export async function ensureDemoTenant(db: Db) {
  const tenant =
    (await findTenantBySlug(db, DEMO_TENANT)) ??
    (await createTenant(db, { slug: DEMO_TENANT, name: 'Demo', tier: 'team' }));
  const existing = await findLiveUserByEmail(db, DEMO_EMAIL);
  const user =
    existing ??
    (await createUser(db, {
      tenantSlug: DEMO_TENANT,
      email: DEMO_EMAIL,
      password: DEMO_PASSWORD,
      name: 'Demo Owner',
      role: 'owner',
    }));
  return {
    tenant,
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
    login: { email: DEMO_EMAIL, password: DEMO_PASSWORD },
  };
}
