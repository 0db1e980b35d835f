import type { Db, Tier } from '@opsi/db';
import { PaymentRequired } from '../errors';
import { openFindingsOf, risksToWire } from './graph.service';
import { buildGraphFromDb, latestSnapshot } from './load';
import { wireNode, type InfraGraph } from './model';
import {
  deleteOldResilienceRuns,
  findLatestReadyResilienceRun,
  findLatestResilienceRun,
  insertResilienceRun,
  markResilienceRunFailed,
  markResilienceRunReady,
} from './repository';
import { computeRisks } from './risks';
import { computeScenarios, type ResilienceFinding } from './scenarios';

const TIER_ORDER: Tier[] = ['free', 'team', 'enterprise'];

/** Refuses a feature below its tier with the contract's 402 (tier_restricted, upgrade_required). */
export function requireTier(tenant: { tier: Tier }, minimum: Tier, feature: string): void {
  if (TIER_ORDER.indexOf(tenant.tier) < TIER_ORDER.indexOf(minimum))
    throw new PaymentRequired(
      feature,
      `${feature} needs the ${minimum} plan or higher; this tenant is on ${tenant.tier}.`,
    );
}

function findingToWire(g: InfraGraph, f: ResilienceFinding) {
  return {
    id: f.id,
    scenario: f.scenario,
    title: f.title,
    severity: f.severity,
    trigger: {
      kind: f.trigger.kind,
      ref: f.trigger.ref,
      resource: f.trigger.node === null ? null : wireNode(g.nodes[f.trigger.node]!),
    },
    impacted: f.impacted.map((x) => ({
      ...wireNode(g.nodes[x.node]!),
      path: x.path.map((i) => g.nodes[i]!.id),
    })),
    reason: f.reason,
    recommendation: f.recommendation,
  };
}
export type WireResilienceFinding = ReturnType<typeof findingToWire>;

/** How many hypotheses the engine evaluates on a graph: AZs, NAT gateways, groups and target groups, roles. */
function hypotheses(g: InfraGraph): number {
  const azs = new Set<string>();
  let n = 0;
  for (const node of g.nodes) {
    if (node.availability_zone) azs.add(node.availability_zone);
    if (
      node.type === 'aws_vpc_nat_gateway' ||
      node.type === 'aws_ec2_target_group' ||
      node.type === 'aws_ec2_autoscaling_group' ||
      node.type === 'aws_iam_role'
    )
      n++;
  }
  return n + azs.size;
}

/**
 * The resilience engine, run as the `pulse.resilience` job after each scan: builds the graph of the
 * tenant's current inventory, evaluates every failure hypothesis (computeScenarios) and the risks
 * (computeRisks), and stores both with the snapshot they describe. The API serves the latest ready run.
 */
export async function runResilience(db: Db, tenantId: string, opts: { scanId?: string | undefined } = {}) {
  const snapshot = await latestSnapshot(db, tenantId);
  const run = await insertResilienceRun(db, tenantId, snapshot?.id ?? null, opts.scanId ?? null);
  const started = Date.now();
  try {
    const g = await buildGraphFromDb(db, tenantId, snapshot?.id ?? null);
    const loadedMs = Date.now() - started;
    const findings = computeScenarios(g).map((f) => findingToWire(g, f));
    const risks = risksToWire(g, computeRisks(g, await openFindingsOf(db, tenantId)));
    const stats = {
      nodes: g.nodes.length,
      edges: g.edges.length,
      dependency_edges: g.arcCount,
      load_ms: loadedMs,
      compute_ms: Date.now() - started - loadedMs,
    };
    const done = await markResilienceRunReady(db, run.id, {
      scenarios: hypotheses(g),
      findings: JSON.stringify(findings),
      risks: JSON.stringify(risks),
      stats: JSON.stringify(stats),
    });
    // Keep the last few runs of the tenant, for a look back; the API reads only the latest ready one.
    await deleteOldResilienceRuns(db, tenantId, run.started_at);
    return { ...done, findings: findings.length, risks: risks.length, stats };
  } catch (e) {
    await markResilienceRunFailed(db, run.id, (e as Error).message.slice(0, 2000));
    throw e;
  }
}

async function latestReady(db: Db, tenantId: string) {
  return findLatestReadyResilienceRun(db, tenantId);
}

/** GET /resilience/status: ready (a run describes the inventory), computing (one is running), or no_data. */
export async function resilienceStatus(db: Db, tenantId: string) {
  const [latest, ready] = await Promise.all([
    findLatestResilienceRun(db, tenantId),
    latestReady(db, tenantId),
  ]);
  const computing = latest?.status === 'computing' && latest.started_at.getTime() > Date.now() - 3_600_000;
  return {
    status: computing ? ('computing' as const) : ready ? ('ready' as const) : ('no_data' as const),
    last_run_at: ready?.finished_at ? ready.finished_at.toISOString() : null,
    scenarios: ready?.scenarios ?? 0,
    findings: ready ? (ready.findings as unknown[]).length : 0,
    snapshot_id: ready?.snapshot_id ?? null,
  };
}

/** GET /resilience/findings: the latest ready run's findings, most severe first. */
export async function listResilienceFindings(
  db: Db,
  tenantId: string,
  o: { scenario?: string | undefined; limit: number; offset: number },
) {
  const ready = await latestReady(db, tenantId);
  const all = ((ready?.findings ?? []) as WireResilienceFinding[]).filter(
    (f) => !o.scenario || f.scenario === o.scenario,
  );
  return { findings: all.slice(o.offset, o.offset + o.limit), total: all.length };
}
