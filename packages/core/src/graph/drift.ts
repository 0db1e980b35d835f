import type { Db } from '@opsi/db';
import { BadRequest } from '../errors';
import { latestSnapshot } from './load';
import type { WireNode } from './model';
import { findDrift } from './repository';

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
  const rows = await findDrift(db, tenantId, from, to);
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
