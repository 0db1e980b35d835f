import type { Db } from '@opsi/db';
import type { QueueHandlers } from '@opsi/jobs';
import { retryLaterIfBusy } from '../inventory';
import { executeReinvestigation } from './reinvestigate';

/** Pulse's queue handlers: re-checking one finding against a fresh scan of its resource. */
export function pulseJobs(d: { db: Db }): { pulse: Pick<QueueHandlers<'pulse'>, 'reinvestigate'> } {
  return {
    pulse: {
      reinvestigate: async (payload, ctx) => {
        try {
          return await executeReinvestigation(d.db, payload.tenant_id, payload.finding_id);
        } catch (e) {
          return retryLaterIfBusy(e, ctx);
        }
      },
    },
  };
}
