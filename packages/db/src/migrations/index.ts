import type { Migration } from 'kysely';
import * as identityAndAudit from './20261122T0800_identity-and-audit';

/** Every migration in order of its timestamped name; frozen once merged, forward only. */
export const migrations: Record<string, Migration> = {
  '20261122T0800_identity-and-audit': identityAndAudit,
};
