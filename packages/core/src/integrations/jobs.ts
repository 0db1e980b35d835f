import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import type { QueueHandlers } from '@opsi/jobs';
import { attemptDelivery } from './deliveries';
import { outboundPolicyFor } from './outbound';
import { secretBoxFor } from './secret-box';

export interface IntegrationJobsDeps {
  db: Db;
  config: Pick<
    Config,
    'NOTIFY_TIMEOUT_MS' | 'publicUrl' | 'OUTBOUND_ALLOW_CIDRS' | 'SECRETS_KEY' | 'DATA_DIR'
  >;
}

/** The integrations' queue handlers: one notifier delivery, on the reports queue. */
export function integrationJobs(d: IntegrationJobsDeps): {
  reports: Pick<QueueHandlers<'reports'>, 'deliver'>;
} {
  const { db, config } = d;
  return {
    reports: {
      deliver: (payload, ctx) =>
        attemptDelivery(db, secretBoxFor(config), payload.delivery_id, {
          tenantId: payload.tenant_id,
          lastAttempt: ctx.job.attemptsStarted >= (ctx.job.opts.attempts ?? 1),
          timeoutMs: config.NOTIFY_TIMEOUT_MS,
          publicUrl: config.publicUrl,
          outbound: outboundPolicyFor(config),
        }),
    },
  };
}
