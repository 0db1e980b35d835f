import { type Db, type Role, type User } from '@opsi/db';
import { BadRequest, Conflict, NotFound } from '../errors';
import { appendAudit } from '../audit';
import { hashPassword } from './passwords';
import { findLiveUserRowByEmail, findTeamMembers, insertUser, markUserDeleted } from './repository';
import { getTenantBySlug } from './tenants';

export { USER_COLUMNS } from './repository';
export type PublicUser = Omit<User, 'password_hash'>;

const EMAIL = /^[^@\s]+@[^@\s]+$/;
const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

export interface CreateUserInput {
  tenantSlug: string;
  email: string;
  password: string;
  name?: string;
  role?: Role;
}

/** Creates a user in a tenant with an argon2id password hash. */
export async function createUser(db: Db, input: CreateUserInput): Promise<PublicUser> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new BadRequest(`not an email address: ${input.email}`);
  if (input.password.length < 8) throw new BadRequest('password must be at least 8 characters');
  const role = input.role ?? 'member';
  if (!ROLES.includes(role)) throw new BadRequest(`role must be one of ${ROLES.join(', ')}`);
  const tenant = await getTenantBySlug(db, input.tenantSlug);
  const taken = await findLiveUserByEmail(db, email);
  if (taken) throw new Conflict(`a user with email ${email} already exists`);
  const password_hash = await hashPassword(input.password);
  return insertUser(db, {
    tenant_id: tenant.id,
    email,
    name: input.name ?? email.split('@')[0]!,
    password_hash,
    role,
  });
}

/** The live (not deleted) user with this email, password hash included, for login. */
export function findLiveUserByEmail(db: Db, email: string): Promise<User | undefined> {
  return findLiveUserRowByEmail(db, email);
}

/**
 * Deletes a user: the row stays (audit entries name it) but the user can no longer log in, and every
 * token and browser session of theirs stops working on the next request.
 */
export async function deleteUser(db: Db, tenantSlug: string, email: string): Promise<PublicUser> {
  const tenant = await getTenantBySlug(db, tenantSlug);
  return db.transaction().execute(async (tx) => {
    const user = await markUserDeleted(tx, tenant.id, email);
    if (!user) throw new NotFound(`no user ${email} in tenant ${tenantSlug}`);
    await appendAudit(tx, tenant.id, {
      actor: { type: 'operator', id: null },
      action: 'user.deleted',
      target_type: 'user',
      target_id: user.id,
      details: { email: user.email },
    });
    return user;
  });
}

/** Members of a tenant with their roles, oldest first. */
export function listTeamMembers(db: Db, tenantId: string) {
  return findTeamMembers(db, tenantId);
}
