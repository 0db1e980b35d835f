import type { Db } from '@opsi/db';
import type { JobProducer } from '@opsi/jobs';
import type { DeliveryPolicy } from '../events';
import { enqueueDeliveries } from '../integrations';
import { generateMorningReport } from './morning-report';
import { findCriticalDetectedFindings } from './repository';

/**
 * Queues a morning report now, on request. While one for the tenant is queued or running, asking again
 * returns that job (BullMQ deduplication), so a double click writes one report.
 */
export async function requestMorningReport(producer: JobProducer, tenantId: string, requestedBy: string) {
  const job = await producer.enqueue(
    'reports',
    'morning',
    { tenant_id: tenantId, period_to: new Date().toISOString(), requested_by: requestedBy },
    { deduplication: { id: `morning-report-${tenantId}` } },
  );
  return { job_id: String(job.id), status: 'queued' as const };
}

/**
 * The reports.morning job: writes the period's report (idempotent per tenant and period end) and queues
 * its delivery to the tenant's notifiers (idempotent per notifier and report), so a retry after any
 * step finishes the rest and writes nothing twice.
 */
export async function runMorningReportJob(
  db: Db,
  producer: JobProducer,
  input: { tenantId: string; periodTo: Date; requestedBy: string },
  policy: DeliveryPolicy,
) {
  const { report, created } = await generateMorningReport(db, input.tenantId, {
    periodTo: input.periodTo,
    requestedBy: input.requestedBy,
  });
  const deliveries = await enqueueDeliveries(
    db,
    producer,
    input.tenantId,
    'report.morning',
    report.id,
    policy,
  );
  return { report_id: report.id, created, deliveries: deliveries.length };
}

/** Queues notifier deliveries for the critical findings a scan opened. */
export async function notifyCriticalFindings(
  db: Db,
  producer: JobProducer,
  tenantId: string,
  scanId: string,
  policy: DeliveryPolicy,
) {
  const rows = await findCriticalDetectedFindings(db, tenantId, scanId);
  let queued = 0;
  for (const r of rows)
    queued += (await enqueueDeliveries(db, producer, tenantId, 'finding.critical', r.id, policy)).length;
  return queued;
}
