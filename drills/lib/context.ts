import { createTenantWithUser, loginOverHttp, mintTestToken } from '../../test/support/index';
import type { Stack } from '../../test/support/stack';
import type { DrillContext, DrillTenant } from './types';

/** The context a drill runs with: the shared stack, its scale, and a fresh tenant on demand. */
export function drillContext(stack: Stack, opts: { quick: boolean; signal: AbortSignal }): DrillContext {
  const t = { db: stack.database.db };
  return {
    stack,
    quick: opts.quick,
    scale: (n, quickN) => (opts.quick ? quickN : n),
    signal: opts.signal,
    log: (message) => console.error(`  ${message}`),
    async newTenant(o = {}): Promise<DrillTenant> {
      const member = await createTenantWithUser(t, { budget: o.budget ?? 100_000 });
      const [read, readWrite] = await Promise.all([
        mintTestToken(t, member, 'read'),
        mintTestToken(t, member, 'read_write'),
      ]);
      const session = await loginOverHttp(stack.api.url, member.user.email, member.password);
      return {
        id: member.tenant.id,
        slug: member.tenant.slug,
        name: member.tenant.name,
        userId: member.user.id,
        email: member.user.email,
        password: member.password,
        tokens: { read: read.token, read_write: readWrite.token },
        tokenIds: { read: read.id, read_write: readWrite.id },
        session,
      };
    },
  };
}
