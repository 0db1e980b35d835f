import { sql, type Db } from '@opsi/db';
import { BadRequest } from '../errors';
import { latestSnapshot } from './load';
import type { WireNode } from './model';

export interface DriftWindow {
  days?: number | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface DriftChange extends WireNode {
  at: string;
  actor: string | null;
  /** The CloudTrail event that names the resource in the interval, when there is one. */
  event: string | null;
}

function valueAt(doc: unknown, path: string): unknown {
  let at: unknown = doc;
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object') return null;
    at = (at as Record<string, unknown>)[key];
  }
  return at === undefined ? null : at;
}

/**
 * Drift over a window from snapshot history: resources added, removed and changed (fields with before
 * and after), each with the time it was observed and the CloudTrail principal of the latest event naming
 * it between the previous snapshot and that one. The window ends at the tenant's latest observation
 * (`days` back from it) unless `since`/`until` say otherwise. A tenant's first snapshot is the baseline,
 * not drift: what it records is never listed as added.
 */
export async function graphDrift(db: Db, tenantId: string, w: DriftWindow) {
  if (w.since && w.until && w.since > w.until) throw new BadRequest('since must not be after until.');
  const latest = await latestSnapshot(db, tenantId);
  const to = w.until ?? latest?.observed_at ?? new Date();
  const from = w.since ?? new Date(to.getTime() - (w.days ?? 7) * 86_400_000);
  const rows = await sql<{
    id: string | null;
    arn: string;
    native_id: string | null;
    type: string;
    name: string | null;
    account_id: string | null;
    region: string | null;
    change: 'created' | 'updated' | 'deleted';
    changed_fields: string[];
    before: unknown;
    after: unknown;
    observed_at: Date;
    actor: string | null;
    event: string | null;
  }>`
    with snaps as (
      select id, observed_at, lag(observed_at) over (order by observed_at, taken_at) as prev_at,
             row_number() over (order by observed_at, taken_at) as n
      from inventory_snapshots where tenant_id = ${tenantId}
    )
    select r.id, h.arn, coalesce(r.native_id, h.after->>'native_id', h.before->>'native_id') as native_id, h.type,
           coalesce(r.name, h.after->>'name', h.before->>'name') as name,
           coalesce(r.account_id, h.after->>'account_id', h.before->>'account_id') as account_id,
           coalesce(r.region, h.after->>'region', h.before->>'region') as region,
           h.change, h.changed_fields, h.before, h.after, h.observed_at, ev.actor, ev.name as event
    from resource_history h
    join snaps s on s.id = h.snapshot_id and s.n > 1
    left join resources r on r.tenant_id = h.tenant_id and r.arn = h.arn
    left join lateral (
      select e.actor, e.name from inventory_events e
      where e.tenant_id = ${tenantId} and e.kind = 'cloudtrail' and e.arns @> array[h.arn]
        and e.at <= h.observed_at and (s.prev_at is null or e.at > s.prev_at)
      order by e.at desc, e.id desc limit 1
    ) ev on true
    where h.tenant_id = ${tenantId} and h.observed_at > ${from} and h.observed_at <= ${to}
    order by h.observed_at, h.arn
    limit 5001`.execute(db);
  const node = (r: (typeof rows.rows)[number]) => ({
    id: r.id ?? '',
    arn: r.arn,
    native_id: r.native_id ?? '',
    type: r.type,
    name: r.name,
    account_id: r.account_id ?? '',
    region: r.region ?? '',
    at: r.observed_at.toISOString(),
    actor: r.actor,
    event: r.event,
  });
  const truncated = rows.rows.length > 5000;
  const list = rows.rows.slice(0, 5000);
  return {
    window: { from: from.toISOString(), to: to.toISOString() },
    added: list.filter((r) => r.change === 'created').map(node),
    removed: list.filter((r) => r.change === 'deleted').map(node),
    changed: list
      .filter((r) => r.change === 'updated')
      .map((r) => ({
        ...node(r),
        fields: r.changed_fields.map((path) => ({
          path,
          before: valueAt(r.before, path),
          after: valueAt(r.after, path),
        })),
      })),
    truncated,
  };
}
