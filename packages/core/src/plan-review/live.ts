import type { Db } from '@opsi/db';
import { blastRadius } from '../graph';
import { loadGraph } from '../graph';
import {
  findActiveFindingsOn,
  findInstanceSecurityGroups,
  findLastCloudTrailEvents,
  findLiveResourceRows,
  findSnapshotTimes,
  type LiveKeys,
} from './repository';

/** A live resource of the tenant's inventory, as plan review joins it. */
export interface LiveResource {
  id: string;
  arn: string;
  type: string;
  native_id: string;
  name: string | null;
  account_id: string;
  region: string;
  availability_zone: string | null;
  tags: Record<string, string>;
  attributes: Record<string, unknown>;
  monthly_cost: number | null;
}

export type { LiveKeys } from './repository';

/** The tenant's live resources that any of the keys name: Terraform address, ARN, native id or name. */
export async function findLiveCandidates(db: Db, tenantId: string, keys: LiveKeys): Promise<LiveResource[]> {
  if (!keys.addresses.length && !keys.arns.length && !keys.ids.length && !keys.names.length) return [];
  const rows = await findLiveResourceRows(db, tenantId, keys);
  return rows.map((r) => ({
    ...r,
    tags: (r.tags ?? {}) as Record<string, string>,
    attributes: (r.attributes ?? {}) as Record<string, unknown>,
    monthly_cost: r.monthly_cost === null ? null : Number(r.monthly_cost),
  }));
}

export interface Dependent {
  id: string | null;
  arn: string;
  type: string | null;
  native_id: string | null;
  name: string | null;
  depth: number;
  /** The kind of the edge that reached it. */
  via: string;
  /** `fails`: no working alternative once the resource is gone; `degraded`: it keeps part of a pool. */
  impact: 'fails' | 'degraded';
}

/**
 * What depends on each of the resources, to a depth: the graph's blast radius (its dependency rules,
 * inferred edges and pool-aware failure), so plan review and GET /graph/blast-radius agree.
 */
export async function findDependents(
  db: Db,
  tenantId: string,
  arns: string[],
  maxDepth = 3,
): Promise<Map<string, Dependent[]>> {
  const out = new Map<string, Dependent[]>();
  if (!arns.length) return out;
  const g = await loadGraph(db, tenantId);
  for (const arn of arns) {
    const root = g.find(arn);
    if (root === undefined) continue;
    const { impacted } = blastRadius(g, root, maxDepth);
    out.set(
      arn,
      impacted
        .map((r) => {
          const n = g.nodes[r.node]!;
          return {
            id: n.id,
            arn: n.arn,
            type: n.type,
            native_id: n.native_id,
            name: n.name,
            depth: r.depth,
            via: r.via[r.via.length - 1] ?? '',
            impact: r.impact,
          };
        })
        .sort((a, b) => a.depth - b.depth || a.arn.localeCompare(b.arn)),
    );
  }
  return out;
}

export interface OpenFinding {
  id: string;
  check_id: string;
  title: string;
  severity: string;
  arn: string;
}

/** The tenant's active findings (open, acknowledged, in progress) on any of the resources. */
export async function findOpenFindings(db: Db, tenantId: string, arns: string[]): Promise<OpenFinding[]> {
  if (!arns.length) return [];
  return findActiveFindingsOn(db, tenantId, arns);
}

/** Security groups (by group id) that a live instance uses. */
export async function findGroupsInUse(db: Db, tenantId: string, groupIds: string[]): Promise<Set<string>> {
  if (!groupIds.length) return new Set();
  const rows = await findInstanceSecurityGroups(db, tenantId, groupIds);
  return new Set(rows.map((r) => r.group_id));
}

/** The newest snapshot time of each database (by identifier) and volume (by id). */
export async function findLatestSnapshots(
  db: Db,
  tenantId: string,
  sources: string[],
): Promise<Map<string, string>> {
  if (!sources.length) return new Map();
  const rows = await findSnapshotTimes(db, tenantId, sources);
  return new Map(rows.filter((r) => r.at).map((r) => [r.source, r.at]));
}

/** The latest CloudTrail event on each resource (for drift made outside Terraform: who did it). */
export async function findLastChanges(
  db: Db,
  tenantId: string,
  arns: string[],
): Promise<Map<string, { at: Date; name: string; actor: string | null }>> {
  if (!arns.length) return new Map();
  const rows = await findLastCloudTrailEvents(db, tenantId, arns);
  return new Map(rows.map((r) => [r.arn, { at: new Date(r.at), name: r.name, actor: r.actor }]));
}
