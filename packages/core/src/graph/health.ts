import type { InfraGraph } from './model';
import { findingsByArn, type OpenFinding } from './risks';

export const HEALTH = ['healthy', 'degraded', 'at_risk', 'critical'] as const;
export type Health = (typeof HEALTH)[number];

export interface HealthMap {
  /** Per node: index into HEALTH. */
  level: Uint8Array;
  /** Per node: the resource (with the findings) its health was inherited from, or -1. */
  inheritedFrom: Int32Array;
  /** Per node: its own open findings by severity. */
  counts: Map<number, Record<'critical' | 'high' | 'medium' | 'low' | 'info', number>>;
}

const OWN: Record<string, number> = { critical: 3, high: 2, medium: 1, low: 1, info: 0 };

/**
 * Health per resource from the open findings on it and on what it depends on: its own worst finding
 * (critical → critical, high → at_risk, medium or low → degraded), and, rolled up along dependencies, one
 * step milder than the worst of everything it depends on transitively (a critical dependency makes its
 * dependents at_risk, an at_risk one degraded). Two breadth-first passes over dependents: O(V + E).
 */
export function computeHealth(g: InfraGraph, findings: OpenFinding[]): HealthMap {
  const n = g.nodes.length;
  const level = new Uint8Array(n);
  const inheritedFrom = new Int32Array(n).fill(-1);
  const counts: HealthMap['counts'] = new Map();
  for (const [arn, list] of findingsByArn(findings)) {
    const i = g.byArn.get(arn);
    if (i === undefined) continue;
    const c = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
    for (const f of list) {
      c[f.severity as keyof typeof c]++;
      level[i] = Math.max(level[i]!, OWN[f.severity] ?? 0);
    }
    counts.set(i, c);
  }
  const own = level.slice();
  // Critical sources make dependents at_risk; then at_risk sources (own or inherited) make them degraded.
  for (const [source, inherited] of [
    [3, 2],
    [2, 1],
  ] as const) {
    const queue: number[] = [];
    const origin = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++)
      if ((source === 3 ? own[i] : level[i]) === source) {
        queue.push(i);
        origin[i] = i;
      }
    for (let head = 0; head < queue.length; head++) {
      const at = queue[head]!;
      for (const arc of g.dependentArcs(at)) {
        const d = g.arcDependent[arc]!;
        if (origin[d] !== -1) continue;
        origin[d] = origin[at]!;
        if (level[d]! < inherited) {
          level[d] = inherited;
          inheritedFrom[d] = origin[at]!;
        }
        queue.push(d);
      }
    }
  }
  return { level, inheritedFrom, counts };
}
