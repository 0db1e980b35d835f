import type { Db } from '@opsi/db';
import { DelayedError, type JobContext, type JobProducer, type QueueHandlers } from '@opsi/jobs';
import { domainBus, type DeliveryPolicy } from '../events';
import { requestScan, runScan, ScanBusy } from './scans';

export interface InventoryJobDeps {
  db: Db;
  producer: JobProducer;
  delivery: DeliveryPolicy;
}

/** Another scan of the tenant is running: come back later rather than fail or run alongside. */
export async function retryLaterIfBusy(e: unknown, ctx: JobContext): Promise<never> {
  if (!(e instanceof ScanBusy)) throw e;
  await ctx.job.moveToDelayed(Date.now() + 15_000, ctx.token);
  throw new DelayedError();
}

/** The inventory's queue handlers: a scan of a tenant's connections. */
export function inventoryJobs(d: InventoryJobDeps): { pulse: Pick<QueueHandlers<'pulse'>, 'scan'> } {
  return {
    pulse: {
      scan: async (payload, ctx) => {
        // A scheduled scan carries no scan id: record one, and keep it in the job so a retry reuses it.
        let scanId = payload.scan_id;
        if (!scanId) {
          scanId = (await requestScan(d.db, null, payload.tenant_id, 'schedule')).id;
          await ctx.job.updateData({ ...payload, scan_id: scanId });
        }
        let scan;
        try {
          scan = await runScan(d.db, scanId);
        } catch (e) {
          return retryLaterIfBusy(e, ctx);
        }
        // Resilience, notifications and triage react on the domain bus (packages/core/src/wiring.ts).
        await domainBus.emit('scan.ended', {
          db: d.db,
          producer: d.producer,
          delivery: d.delivery,
          tenantId: payload.tenant_id,
          scanId: scan.id,
          status: scan.status,
        });
        return { scan_id: scan.id, status: scan.status };
      },
    },
  };
}
