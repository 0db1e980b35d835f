import { listLiveTenants } from '@opsi/core';
import type { Db } from '@opsi/db';
import { jobDefinition, type JobProducer, type QueueName } from '@opsi/jobs';

/** One recurring job per tenant, at the tenant's local time. */
export const TENANT_SCHEDULES = [
  { kind: 'nightly-scan', queue: 'pulse', job: 'scan', pattern: '0 2 * * *' },
  { kind: 'morning-report', queue: 'reports', job: 'morning', pattern: '0 7 * * *' },
] as const satisfies ReadonlyArray<{ kind: string; queue: QueueName; job: string; pattern: string }>;

export function scheduleId(kind: string, tenantId: string): string {
  return `${kind}:${tenantId}`;
}

export interface ReconcileResult {
  tenants: number;
  upserted: string[];
  removed: string[];
}

/**
 * Brings the job schedulers in line with the tenants table: one per tenant and schedule, in the tenant's
 * timezone; a changed timezone moves it, a deleted tenant loses it. Upserts only what differs, and every
 * step is idempotent, so two schedulers running at once do no harm.
 */
export async function reconcileSchedules(db: Db, producer: JobProducer): Promise<ReconcileResult> {
  const tenants = await listLiveTenants(db);
  const result: ReconcileResult = { tenants: tenants.length, upserted: [], removed: [] };
  for (const schedule of TENANT_SCHEDULES) {
    const queue = producer.queue(schedule.queue);
    const definition = jobDefinition(schedule.queue, schedule.job)!;
    const existing = new Map(
      (await queue.getJobSchedulers(0, -1))
        .filter((s) => s.key.startsWith(`${schedule.kind}:`))
        .map((s) => [s.key, s]),
    );
    const wanted = new Set<string>();
    for (const tenant of tenants) {
      const id = scheduleId(schedule.kind, tenant.id);
      wanted.add(id);
      const current = existing.get(id);
      if (current && current.pattern === schedule.pattern && current.tz === tenant.timezone) continue;
      await queue.upsertJobScheduler(
        id,
        { pattern: schedule.pattern, tz: tenant.timezone },
        {
          name: schedule.job,
          data: definition.schema.parse({ tenant_id: tenant.id }),
          opts: definition.options,
        },
      );
      result.upserted.push(id);
    }
    for (const id of existing.keys()) {
      if (!wanted.has(id) && (await queue.removeJobScheduler(id))) result.removed.push(id);
    }
  }
  return result;
}
