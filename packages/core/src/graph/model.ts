import { asDependency, type Needs } from './dependency';

/** A resource as the graph holds it: what every answer names, and the few facts analysis reads. */
export interface GraphNodeData {
  id: string;
  arn: string;
  native_id: string;
  type: string;
  name: string | null;
  account_id: string;
  region: string;
  availability_zone: string | null;
  /** The `service` tag, when there is one. */
  service: string | null;
  /** The `DataClassification` tag, when there is one. */
  classification: string | null;
  /** The attributes analysis needs (per type; see FACTS in load.ts), or null. */
  facts: Record<string, unknown> | null;
}

/** A node on the wire: `{id, arn, native_id, type, name, account_id, region}`. */
export interface WireNode {
  id: string;
  arn: string;
  native_id: string;
  type: string;
  name: string | null;
  account_id: string;
  region: string;
}

export interface GraphEdge {
  from: number;
  to: number;
  kind: string;
  /** 'config', 'terraform' or 'inferred:<how>'. */
  source: string;
  confidence: number;
  /** An inference (source 'inferred:…'), whether the connector stored it or the graph derived it. */
  inferred: boolean;
  /** Derived from attributes when the graph was built (not stored in the inventory). */
  derived: boolean;
  /** For an inferred edge: the attribute that gave it away. */
  evidence: string | null;
}

export function wireNode(n: GraphNodeData): WireNode {
  return {
    id: n.id,
    arn: n.arn,
    native_id: n.native_id,
    type: n.type,
    name: n.name,
    account_id: n.account_id,
    region: n.region,
  };
}

/**
 * The infrastructure graph of one tenant's current inventory. Nodes are resources; edges are the
 * inventory's typed edges plus the inferred ones, each kept with its source and confidence. Every edge
 * is read once through DEPENDENCY_RULES into dependency arcs (dependent → dependency), stored as two
 * compressed adjacency lists (CSR: one Int32Array of offsets, one of arc ids), so walking dependents or
 * dependencies of a 100,000-node graph touches only typed arrays.
 */
export class InfraGraph {
  readonly byArn = new Map<string, number>();
  readonly byId = new Map<string, number>();
  readonly byNativeId = new Map<string, number>();
  /** Arc i: arcDependent[i] depends on arcDependency[i], through edges[arcEdge[i]]. */
  readonly arcDependent: Int32Array;
  readonly arcDependency: Int32Array;
  readonly arcEdge: Int32Array;
  readonly arcNeedsAny: Uint8Array;
  private readonly dependentsStart: Int32Array;
  private readonly dependentsArcs: Int32Array;
  private readonly dependenciesStart: Int32Array;
  private readonly dependenciesArcs: Int32Array;

  constructor(
    readonly nodes: GraphNodeData[],
    readonly edges: GraphEdge[],
    readonly snapshotId: string | null = null,
  ) {
    nodes.forEach((n, i) => {
      this.byArn.set(n.arn, i);
      this.byId.set(n.id, i);
      if (!this.byNativeId.has(n.native_id)) this.byNativeId.set(n.native_id, i);
    });
    const dependent: number[] = [];
    const dependency: number[] = [];
    const edgeOf: number[] = [];
    const needs: Needs[] = [];
    edges.forEach((e, i) => {
      const d = asDependency({
        kind: e.kind,
        from: e.from,
        to: e.to,
        fromType: nodes[e.from]!.type,
        toType: nodes[e.to]!.type,
      });
      if (!d || d.dependent === d.dependency) return;
      dependent.push(d.dependent);
      dependency.push(d.dependency);
      edgeOf.push(i);
      needs.push(d.needs);
    });
    this.arcDependent = Int32Array.from(dependent);
    this.arcDependency = Int32Array.from(dependency);
    this.arcEdge = Int32Array.from(edgeOf);
    this.arcNeedsAny = Uint8Array.from(needs.map((x) => (x === 'any' ? 1 : 0)));
    [this.dependentsStart, this.dependentsArcs] = csr(nodes.length, this.arcDependency);
    [this.dependenciesStart, this.dependenciesArcs] = csr(nodes.length, this.arcDependent);
  }

  get arcCount(): number {
    return this.arcDependent.length;
  }

  /** Arc ids whose dependency is node i (who depends on i). */
  dependentArcs(i: number): Int32Array {
    return this.dependentsArcs.subarray(this.dependentsStart[i]!, this.dependentsStart[i + 1]!);
  }

  /** Arc ids whose dependent is node i (what i depends on). */
  dependencyArcs(i: number): Int32Array {
    return this.dependenciesArcs.subarray(this.dependenciesStart[i]!, this.dependenciesStart[i + 1]!);
  }

  /** A node by our id, its ARN or its native id. */
  find(ref: string): number | undefined {
    return this.byId.get(ref) ?? this.byArn.get(ref) ?? this.byNativeId.get(ref);
  }
}

function csr(n: number, key: Int32Array): [Int32Array, Int32Array] {
  const start = new Int32Array(n + 1);
  for (let i = 0; i < key.length; i++) start[key[i]! + 1]!++;
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, n);
  const arcs = new Int32Array(key.length);
  for (let i = 0; i < key.length; i++) arcs[fill[key[i]!]!++] = i;
  return [start, arcs];
}
