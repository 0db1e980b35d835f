import type { Db, Role, Tier, TokenScope } from '@opsi/db';

export interface AuthTenant {
  id: string;
  slug: string;
  name: string;
  tier: Tier;
  timezone: string;
  daily_agent_budget: number;
}

export interface AuthUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

/** Who is calling: resolved once per request from a bearer token or a browser session. */
export type Auth =
  | {
      kind: 'token';
      tenant: AuthTenant;
      user: AuthUser;
      token: { id: string; scope: TokenScope; expires_at: Date | null };
    }
  | {
      kind: 'session';
      tenant: AuthTenant;
      user: AuthUser;
      session: { id: string; csrf_token: string; expires_at: Date };
    };

/** What services need from the process: passed down as one value, never read from globals. */
export interface CoreDeps {
  db: Db;
}
