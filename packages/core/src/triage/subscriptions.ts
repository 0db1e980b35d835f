import type { DomainBus } from '../events';

/** What triage does when other domains act: the alert events a completed scan brought in are triaged. */
export function subscribeTriage(bus: DomainBus): void {
  bus.on('scan.ended', async ({ producer, tenantId, scanId, status }) => {
    // The job id makes a retry harmless.
    if (status === 'completed')
      await producer.enqueue(
        'triage',
        'scan',
        { tenant_id: tenantId, scan_id: scanId },
        { jobId: `scan-${scanId}` },
      );
  });
}
