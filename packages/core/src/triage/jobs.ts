import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import type { JobProducer, QueueHandlers, TimelineLog } from '@opsi/jobs';
import type { DeliveryPolicy } from '../events';
import { processAlertBatch, triageInventoryAlerts } from './triage';

export interface TriageJobsDeps {
  db: Db;
  timeline: TimelineLog;
  producer: JobProducer;
  delivery: DeliveryPolicy;
  config: Pick<Config, 'TRIAGE_DEDUPE_WINDOW_MINUTES' | 'TRIAGE_CORRELATION_WINDOW_MINUTES'>;
}

/** The triage queue's handlers: a batch of posted alerts, and the alert events a scan brought in. */
export function triageJobs(d: TriageJobsDeps): { triage: QueueHandlers<'triage'> } {
  // Incidents triage opens are delivered to notifiers subscribed to incident.opened.
  const deps = {
    db: d.db,
    timeline: d.timeline,
    dedupeWindowMinutes: d.config.TRIAGE_DEDUPE_WINDOW_MINUTES,
    correlationWindowMinutes: d.config.TRIAGE_CORRELATION_WINDOW_MINUTES,
    notify: { producer: d.producer, policy: d.delivery },
  };
  return {
    triage: {
      alerts: (payload) => processAlertBatch(deps, payload.tenant_id, payload.batch_id, payload.inbox_ids),
      scan: (payload) => triageInventoryAlerts(deps, payload.tenant_id),
    },
  };
}
