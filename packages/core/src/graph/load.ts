import type { Db } from '@opsi/db';
import { inferEdges } from './infer';
import { InfraGraph, type GraphEdge, type GraphNodeData } from './model';
import { findGraphEdges, findGraphResources, findLatestSnapshot } from './repository';

/** The latest snapshot of a tenant (what the current inventory is), or null before the first scan. */
export async function latestSnapshot(db: Db, tenantId: string) {
  const row = await findLatestSnapshot(db, tenantId);
  return row ?? null;
}

/** Reads a tenant's current inventory and builds its graph (stored edges, then the inferred ones). */
export async function buildGraphFromDb(db: Db, tenantId: string, snapshotId: string | null = null) {
  const [resources, edges] = await Promise.all([
    findGraphResources(db, tenantId),
    findGraphEdges(db, tenantId),
  ]);
  const nodes: GraphNodeData[] = resources.rows;
  const index = new Map<string, number>();
  nodes.forEach((n, i) => index.set(n.arn, i));
  const stored: GraphEdge[] = [];
  for (const e of edges.rows) {
    const from = index.get(e.from_arn);
    const to = index.get(e.to_arn);
    if (from === undefined || to === undefined) continue;
    stored.push({
      from,
      to,
      kind: e.kind,
      source: e.source,
      confidence: Number(e.confidence),
      inferred: e.source.startsWith('inferred:'),
      derived: false,
      evidence: null,
    });
  }
  return new InfraGraph(nodes, [...stored, ...inferEdges(nodes, stored)], snapshotId);
}

interface CacheEntry {
  snapshotId: string | null;
  graph: Promise<InfraGraph>;
}

/**
 * Graphs by tenant, each valid for one snapshot: a scan makes a new snapshot, and the next read rebuilds.
 * Small (GRAPH_CACHE_TENANTS, least recently used first out): a 100,000-resource graph is tens of MB.
 */
const cache = new Map<string, CacheEntry>();
let cacheSize = 8;

/** How many tenants' graphs one process keeps (0: none; every read builds the graph). */
export function setGraphCacheSize(n: number): void {
  cacheSize = Math.max(0, Math.floor(n));
  while (cache.size > cacheSize) cache.delete(cache.keys().next().value!);
}

/**
 * The graph of a tenant's current inventory: nodes are its resources, edges the inventory's typed
 * edges plus the inferred dependencies. Cached per tenant until the next snapshot.
 */
export async function loadGraph(db: Db, tenantId: string): Promise<InfraGraph> {
  const snapshot = await latestSnapshot(db, tenantId);
  const snapshotId = snapshot?.id ?? null;
  const hit = cache.get(tenantId);
  if (hit && hit.snapshotId === snapshotId) {
    cache.delete(tenantId);
    cache.set(tenantId, hit);
    return hit.graph;
  }
  const graph = buildGraphFromDb(db, tenantId, snapshotId);
  if (cacheSize > 0) {
    cache.delete(tenantId);
    cache.set(tenantId, { snapshotId, graph });
    while (cache.size > cacheSize) cache.delete(cache.keys().next().value!);
    graph.catch(() => {
      if (cache.get(tenantId)?.graph === graph) cache.delete(tenantId);
    });
  }
  return graph;
}
