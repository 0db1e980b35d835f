import { createHash } from 'node:crypto';
import { listLiveTenants } from '@opsi/core';
import type { Db } from '@opsi/db';
import { jobDefinition, type JobProducer, type QueueName } from '@opsi/jobs';

/**
 * The nightly scans' window, in each tenant's local time: 01:00 to 05:00. Every tenant's scan has its
 * own second in it (from a hash of its id: stable across passes, so a pass changes nothing; uniform
 * over tenants), so 10,000 tenants start about one every 1.4 s rather than all at 02:00. The window
 * ends two hours before the morning report (07:00), which reads the night's findings. Daylight-saving
 * nights need nothing here: BullMQ's cron (cron-parser) moves a skipped time forward and runs a
 * repeated one once (scheduler.int.test.ts checks it for every half hour of the window).
 */
export const NIGHT_WINDOW = { startSecond: 1 * 3600, seconds: 4 * 3600 } as const;

/** The second of the local day at which a tenant's nightly scan starts. */
export function nightlySecond(tenantId: string): number {
  const n = createHash('sha256').update(tenantId).digest().readUInt32BE(0);
  return NIGHT_WINDOW.startSecond + (n % NIGHT_WINDOW.seconds);
}

/** A daily cron pattern (with seconds) at a second of the local day. */
export function dailyAt(second: number): string {
  return `${second % 60} ${Math.floor(second / 60) % 60} ${Math.floor(second / 3600)} * * *`;
}

/** One recurring job per tenant, at the tenant's local time. */
export const TENANT_SCHEDULES = [
  { kind: 'nightly-scan', queue: 'pulse', job: 'scan', pattern: (id: string) => dailyAt(nightlySecond(id)) },
  { kind: 'morning-report', queue: 'reports', job: 'morning', pattern: () => '0 7 * * *' },
] as const satisfies ReadonlyArray<{
  kind: string;
  queue: QueueName;
  job: string;
  pattern: (tenantId: string) => string;
}>;

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
      const pattern = schedule.pattern(tenant.id);
      const current = existing.get(id);
      if (current && current.pattern === pattern && current.tz === tenant.timezone) continue;
      await queue.upsertJobScheduler(
        id,
        { pattern, tz: tenant.timezone },
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
