import type { DomainBus } from '../events';

/** What the graph does when other domains act: a scan's end starts its resilience run, as its own job. */
export function subscribeGraph(bus: DomainBus): void {
  bus.on('scan.ended', async ({ producer, tenantId, scanId }) => {
    // The resilience engine runs on the graph this scan wrote (its own retries; the id makes a repeat harmless).
    await producer.enqueue(
      'pulse',
      'resilience',
      { tenant_id: tenantId, scan_id: scanId },
      { jobId: `resilience-${scanId}` },
    );
  });
}
