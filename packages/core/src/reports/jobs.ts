import type { Db } from '@opsi/db';
import type { JobProducer, QueueHandlers } from '@opsi/jobs';
import type { DeliveryPolicy } from '../events';
import { runMorningReportJob } from './report-jobs';

export interface ReportJobsDeps {
  db: Db;
  producer: JobProducer;
  delivery: DeliveryPolicy;
}

/** The reports' queue handlers: the morning report (its deliveries are the integrations'). */
export function reportJobs(d: ReportJobsDeps): { reports: Pick<QueueHandlers<'reports'>, 'morning'> } {
  return {
    reports: {
      morning: async (payload, ctx) => {
        // A scheduled job names no period end: record one, so a retry writes the same period's report.
        let periodTo = payload.period_to;
        if (!periodTo) {
          periodTo = new Date().toISOString();
          await ctx.job.updateData({ ...payload, period_to: periodTo });
        }
        return runMorningReportJob(
          d.db,
          d.producer,
          {
            tenantId: payload.tenant_id,
            periodTo: new Date(periodTo),
            requestedBy: payload.requested_by ?? 'schedule',
          },
          d.delivery,
        );
      },
    },
  };
}
