import type { Db } from '@opsi/db';
import type { QueueHandlers } from '@opsi/jobs';
import { runResilience } from './resilience';

/** The graph's queue handlers: the resilience engine over the inventory a scan just wrote. */
export function graphJobs(d: { db: Db }): { pulse: Pick<QueueHandlers<'pulse'>, 'resilience'> } {
  return {
    pulse: {
      resilience: async (payload) => {
        const run = await runResilience(d.db, payload.tenant_id, { scanId: payload.scan_id });
        return { run_id: run.id, findings: run.findings, risks: run.risks, stats: run.stats };
      },
    },
  };
}
