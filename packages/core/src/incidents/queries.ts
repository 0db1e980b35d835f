import type { Db, Database, Transaction } from '@opsi/db';
import { dependenciesOf, dependentsOf, loadGraph } from '../graph';
import { findIncidentAlerts, findIncidentForNotification, findIncidentHeadline } from './repository';

type Tx = Transaction<Database> | Db;

export interface RelatedResource {
  arn: string;
  depth: number;
  /** How it is connected to the start: `dependency` (the start needs it), `dependent` (it needs the start), or both. */
  direction: 'dependency' | 'dependent' | 'mixed';
  /** Edge kinds along the first path found. */
  via: string[];
}

/**
 * Resources connected to one in the infrastructure graph (the graph package's dependency model: its
 * edges read by DEPENDENCY_RULES, inferred dependencies included), within `depth` hops, following
 * dependencies down and dependents up, never down-then-up (two resources that merely share a subnet or a
 * security group are not connected). The one seam for "connected in the graph": triage correlation and
 * the investigation tools call only this. An ARN the graph does not hold has no connections.
 */
export async function relatedResources(
  db: Tx,
  tenantId: string,
  arn: string,
  opts: { depth?: number } = {},
): Promise<RelatedResource[]> {
  const g = await loadGraph(db as Db, tenantId);
  const start = g.byArn.get(arn);
  if (start === undefined) return [];
  const depth = opts.depth ?? 2;
  const out = new Map<string, RelatedResource>();
  for (const [reached, direction] of [
    [dependenciesOf(g, start, depth), 'dependency'],
    [dependentsOf(g, start, depth), 'dependent'],
  ] as const) {
    for (const r of reached) {
      const node = g.nodes[r.node]!;
      const seen = out.get(node.arn);
      if (seen) {
        if (seen.direction !== direction) seen.direction = 'mixed';
        continue;
      }
      out.set(node.arn, { arn: node.arn, depth: r.depth, direction, via: r.via });
    }
  }
  return [...out.values()].sort((a, b) => a.depth - b.depth || a.arn.localeCompare(b.arn));
}

/** The alerts (triage events) attached to an incident, oldest first. */
export async function incidentAlerts(db: Tx, tenantId: string, incidentId: string) {
  return findIncidentAlerts(db, tenantId, incidentId);
}

/**
 * What a notifier says about an incident (incidents opened by triage call
 * `enqueueDeliveries(db, producer, tenantId, 'incident.opened', incidentId, policy)`). Undefined when
 * there is no such incident in the tenant: the delivery is then recorded failed.
 */
export async function incidentForNotification(
  db: Tx,
  tenantId: string,
  incidentId: string,
): Promise<Record<string, unknown> | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(incidentId)) return undefined;
  const row = await findIncidentForNotification(db, tenantId, incidentId);
  if (!row) return undefined;
  return {
    incident_id: row.id,
    title: row.title,
    severity: row.severity,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** An incident's id and title, or undefined when the tenant has no such incident. */
export async function incidentHeadline(db: Tx, tenantId: string, incidentId: string) {
  return findIncidentHeadline(db, tenantId, incidentId);
}
