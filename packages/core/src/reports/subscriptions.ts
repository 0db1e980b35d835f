import type { DomainBus } from '../events';
import { notifyCriticalFindings } from './report-jobs';

/** What notifications do when other domains act: a completed scan's critical findings are delivered. */
export function subscribeReports(bus: DomainBus): void {
  bus.on('scan.ended', async ({ db, producer, delivery, tenantId, scanId, status }) => {
    if (status === 'completed') await notifyCriticalFindings(db, producer, tenantId, scanId, delivery);
  });
}
