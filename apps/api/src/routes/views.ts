import type { Auth } from '@opsi/core';

/** The wire shapes of the caller, shared by /me, /auth/login and /auth/session. */
export function userView(auth: Auth) {
  const { id, email, name, role } = auth.user;
  return { id, email, name, role };
}

export function tenantView(auth: Auth) {
  const { id, slug, name, tier } = auth.tenant;
  return { id, slug, name, tier };
}
