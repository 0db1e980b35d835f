import type { InfraGraph } from './model';

export interface Reached {
  /** Node index. */
  node: number;
  depth: number;
  /** Node indexes from the start to this node, both included. */
  path: number[];
  /** Edge kinds along the path, one per hop. */
  via: string[];
  /** Edge sources along the path ('config', 'inferred:…'), one per hop. */
  sources: string[];
}

/**
 * Breadth-first walk from one node along dependency arcs: towards its dependents (`up`: what needs
 * it) or its dependencies (`down`: what it needs), to a depth, keeping the first path to each node.
 */
export function walk(g: InfraGraph, start: number, depth: number, direction: 'up' | 'down'): Reached[] {
  // Maps, not arrays of the graph's size: a walk usually reaches a few nodes of a large graph, and the
  // SPOF analysis walks from every service entry.
  const dist = new Map<number, number>([[start, 0]]);
  const parentArc = new Map<number, number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head]!;
    const d = dist.get(at)!;
    if (d >= depth) continue;
    const arcs = direction === 'up' ? g.dependentArcs(at) : g.dependencyArcs(at);
    for (const arc of arcs) {
      const next = direction === 'up' ? g.arcDependent[arc]! : g.arcDependency[arc]!;
      if (dist.has(next)) continue;
      dist.set(next, d + 1);
      parentArc.set(next, arc);
      queue.push(next);
    }
  }
  return queue.slice(1).map((node) => {
    const path = [node];
    const via: string[] = [];
    const sources: string[] = [];
    let at = node;
    while (at !== start) {
      const arc = parentArc.get(at)!;
      const e = g.edges[g.arcEdge[arc]!]!;
      via.push(e.kind);
      sources.push(e.source);
      at = direction === 'up' ? g.arcDependency[arc]! : g.arcDependent[arc]!;
      path.push(at);
    }
    return {
      node,
      depth: dist.get(node)!,
      path: path.reverse(),
      via: via.reverse(),
      sources: sources.reverse(),
    };
  });
}

/**
 * What fails when the given nodes fail, following dependents to the end: a dependent that needs each of
 * its dependencies fails with any of them; one that needs any of a pool (a target group's targets, a
 * load balancer's target groups) fails only when the whole pool has. Answers a mask: 1 = failed.
 */
export function simulateFailure(g: InfraGraph, failed: Iterable<number>): Uint8Array {
  const n = g.nodes.length;
  const down = new Uint8Array(n);
  const poolLeft = new Map<number, number>();
  const queue: number[] = [];
  for (const f of failed) {
    if (down[f]) continue;
    down[f] = 1;
    queue.push(f);
  }
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head]!;
    for (const arc of g.dependentArcs(at)) {
      const d = g.arcDependent[arc]!;
      if (down[d]) continue;
      if (g.arcNeedsAny[arc]) {
        let left = poolLeft.get(d);
        if (left === undefined) {
          left = 0;
          for (const a of g.dependencyArcs(d)) if (g.arcNeedsAny[a]) left++;
        }
        left--;
        poolLeft.set(d, left);
        if (left > 0) continue;
      }
      down[d] = 1;
      queue.push(d);
    }
  }
  return down;
}

/** Node indexes of a mask, in index order. */
export function maskNodes(mask: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) out.push(i);
  return out;
}

export interface BlastRadius {
  impacted: Array<Reached & { impact: 'fails' | 'degraded' }>;
  byDepth: Record<string, number>;
}

/**
 * What stops working or loses protection if a resource fails or is removed: its dependents to a depth
 * (following arcs towards what needs it), each with the first path and edge kinds that make it
 * impacted, and whether it fails outright or is degraded (it keeps part of a pool).
 */
export function blastRadius(g: InfraGraph, root: number, depth: number): BlastRadius {
  const reached = walk(g, root, depth, 'up');
  const fails = simulateFailure(g, [root]);
  const byDepth: Record<string, number> = {};
  const impacted = reached.map((r) => {
    byDepth[String(r.depth)] = (byDepth[String(r.depth)] ?? 0) + 1;
    return { ...r, impact: fails[r.node] ? ('fails' as const) : ('degraded' as const) };
  });
  return { impacted, byDepth };
}

/** Who depends on a node, to a depth (default 1: direct dependents). */
export function dependentsOf(g: InfraGraph, node: number, depth = 1): Reached[] {
  return walk(g, node, depth, 'up');
}

/** What a node depends on, to a depth (default 1: direct dependencies). */
export function dependenciesOf(g: InfraGraph, node: number, depth = 1): Reached[] {
  return walk(g, node, depth, 'down');
}
