import type { Db } from '@opsi/db';
import { NotFound } from '../errors';
import { blastRadius } from './analysis';
import { computeHealth, HEALTH, type Health } from './health';
import { loadGraph } from './load';
import { wireNode, type InfraGraph } from './model';
import { findLastCompletedScan, findOpenFindingResources, searchResources } from './repository';
import { computeRisks, type OpenFinding } from './risks';

/** The tenant's open (active) findings, one row per finding and resource. */
export async function openFindingsOf(db: Db, tenantId: string): Promise<OpenFinding[]> {
  return findOpenFindingResources(db, tenantId);
}

/** A node of the graph by our id, its ARN or its native id; another tenant's or an unknown one is 404. */
export function resolveNode(g: InfraGraph, ref: string): number {
  const i = g.find(ref);
  if (i === undefined) throw new NotFound('No such resource in this tenant’s inventory.');
  return i;
}

/** Node and edge counts, nodes by type, the health roll-up and when the last scan finished. */
export async function graphSummary(db: Db, tenantId: string) {
  const [g, findings, scan] = await Promise.all([
    loadGraph(db, tenantId),
    openFindingsOf(db, tenantId),
    findLastCompletedScan(db, tenantId),
  ]);
  const by_type: Record<string, number> = {};
  for (const n of g.nodes) by_type[n.type] = (by_type[n.type] ?? 0) + 1;
  const { level } = computeHealth(g, findings);
  const health = { healthy: 0, degraded: 0, at_risk: 0, critical: 0 };
  for (const l of level) health[HEALTH[l]!]++;
  const inferred = g.edges.filter((e) => e.inferred).length;
  const derived = g.edges.filter((e) => e.derived).length;
  return {
    nodes: g.nodes.length,
    edges: g.edges.length,
    structural_edges: g.edges.length - g.arcCount,
    dependency_edges: g.arcCount,
    inferred_edges: inferred,
    derived_edges: derived,
    by_type: Object.fromEntries(Object.entries(by_type).sort(([a], [b]) => a.localeCompare(b))),
    health,
    last_scan_at: scan?.finished_at ? scan.finished_at.toISOString() : null,
  };
}

/** Escapes LIKE wildcards so a query is matched as written. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Resources whose id, ARN, native id, name or tags (keys and values) contain `q` (case-insensitive), exact
 * matches first, each with its count of open findings. The match runs on one expression that a
 * trigram index serves (migration 20261125T0201).
 */
export async function searchGraph(
  db: Db,
  tenantId: string,
  o: { q: string; type?: string | undefined; limit: number },
) {
  const pattern = `%${likeEscape(o.q.toLowerCase())}%`;
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(o.q);
  const rows = await searchResources(db, tenantId, o, pattern, isUuid);
  return { results: rows };
}

/** GET /graph/blast-radius: the resource and everything impacted within `depth`, with paths. */
export async function graphBlastRadius(db: Db, tenantId: string, ref: string, depth: number) {
  const g = await loadGraph(db, tenantId);
  const root = resolveNode(g, ref);
  const { impacted, byDepth } = blastRadius(g, root, depth);
  return {
    resource: wireNode(g.nodes[root]!),
    depth,
    impacted: impacted.map((r) => ({
      ...wireNode(g.nodes[r.node]!),
      depth: r.depth,
      via: r.via,
      path: r.path.map((i) => g.nodes[i]!.id),
      sources: r.sources,
      impact: r.impact,
    })),
    by_depth: byDepth,
    total: impacted.length,
  };
}

/** GET /graph/health: resources with their health and own open findings, worst first, and the totals. */
export async function graphHealth(
  db: Db,
  tenantId: string,
  o: { status?: Health | undefined; limit: number; offset: number },
) {
  const [g, findings] = await Promise.all([loadGraph(db, tenantId), openFindingsOf(db, tenantId)]);
  const { level, inheritedFrom, counts } = computeHealth(g, findings);
  const totals = { healthy: 0, degraded: 0, at_risk: 0, critical: 0 };
  for (const l of level) totals[HEALTH[l]!]++;
  const wanted = o.status ? HEALTH.indexOf(o.status) : -1;
  const order: number[] = [];
  for (let i = 0; i < g.nodes.length; i++) if (wanted === -1 || level[i] === wanted) order.push(i);
  // Worst first; then the ones with their own findings; then by type and ARN (the nodes are in ARN order).
  order.sort(
    (a, b) =>
      level[b]! - level[a]! ||
      Number(counts.has(b)) - Number(counts.has(a)) ||
      g.nodes[a]!.type.localeCompare(g.nodes[b]!.type) ||
      a - b,
  );
  return {
    resources: order.slice(o.offset, o.offset + o.limit).map((i) => ({
      ...wireNode(g.nodes[i]!),
      health: HEALTH[level[i]!]!,
      open_findings: counts.get(i) ?? { critical: 0, high: 0, medium: 0, low: 0, info: 0 },
      inherited_from: inheritedFrom[i]! >= 0 ? g.nodes[inheritedFrom[i]!]!.id : null,
    })),
    totals,
    total: order.length,
  };
}

/** GET /graph/risks: single points of failure and toxic combinations, most severe first. */
export async function graphRisks(db: Db, tenantId: string) {
  const [g, findings] = await Promise.all([loadGraph(db, tenantId), openFindingsOf(db, tenantId)]);
  return { risks: risksToWire(g, computeRisks(g, findings)) };
}

export function risksToWire(g: InfraGraph, risks: ReturnType<typeof computeRisks>) {
  return risks.map((r) => ({
    id: r.id,
    kind: r.kind,
    basis: r.basis,
    title: r.title,
    severity: r.severity,
    reason: r.reason,
    resources: r.resources.map((i) => wireNode(g.nodes[i]!)),
    finding_ids: r.finding_ids,
  }));
}
