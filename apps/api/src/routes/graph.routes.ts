import {
  BlastRadius,
  BlastRadiusQuery,
  GraphDrift,
  GraphDriftQuery,
  GraphHealth,
  GraphHealthQuery,
  GraphRisks,
  GraphSearchQuery,
  GraphSearchResults,
  GraphSummary,
  ResilienceFindings,
  ResilienceFindingsQuery,
  ResilienceStatus,
  ResourceRefParams,
} from '@opsi/contracts';
import {
  graphBlastRadius,
  graphDrift,
  graphHealth,
  graphRisks,
  graphSummary,
  listResilienceFindings,
  requireTier,
  resilienceStatus,
  searchGraph,
} from '@opsi/core';
import { defineRoute } from '../http/route';

const REF =
  'The resource is named by its id, its ARN (URL-encoded) or its native id; one unknown to this tenant is 404.';

export const getGraphSummary = defineRoute({
  method: 'GET',
  path: '/api/v1/graph/summary',
  auth: 'read',
  summary: 'Node and edge counts, nodes by type, the health roll-up, and when the last scan finished',
  description:
    'edges counts every edge of the graph: the inventory’s typed edges and the inferred dependencies; dependency_edges those read as a dependency (the rest are structural), inferred_edges the inferred ones (source inferred:…), derived_edges those the graph inferred from attributes itself. A tenant without an environment gets zeros and last_scan_at null.',
  tags: ['graph'],
  responses: { 200: GraphSummary },
  handler: ({ deps, auth }) => graphSummary(deps.db, auth.tenant.id),
});

export const getGraphSearch = defineRoute({
  method: 'GET',
  path: '/api/v1/graph/search',
  auth: 'read',
  summary: 'Resources whose id, ARN, native id, name or tags contain q (case-insensitive)',
  description: 'q is 1 to 200 characters; type narrows to one resource type; limit 1 to 500 (default 50).',
  tags: ['graph'],
  query: GraphSearchQuery,
  responses: { 200: GraphSearchResults },
  errors: [400],
  handler: ({ deps, auth, query }) =>
    searchGraph(deps.db, auth.tenant.id, { q: query.q, type: query.type, limit: query.limit }),
});

export const getBlastRadius = defineRoute({
  method: 'GET',
  path: '/api/v1/graph/blast-radius/:id',
  auth: 'read',
  summary: 'What stops working or loses protection if a resource fails, by dependency depth',
  description: `${REF} depth 1 to 10 (default 3). Each impacted resource carries its depth, the path of ids from the resource, the edge kinds (via) and sources along it, and impact: fails (it has no working alternative) or degraded (it keeps part of a pool).`,
  tags: ['graph'],
  params: ResourceRefParams,
  query: BlastRadiusQuery,
  responses: { 200: BlastRadius },
  errors: [400],
  handler: ({ deps, auth, params, query }) =>
    graphBlastRadius(deps.db, auth.tenant.id, params.id, query.depth),
});

export const getGraphHealth = defineRoute({
  method: 'GET',
  path: '/api/v1/graph/health',
  auth: 'read',
  summary: 'Per-resource health from open findings on it and on what it depends on, worst first',
  description:
    'health: critical (a critical finding on it), at_risk (a high one, or it depends on something critical), degraded (a medium or low one, or it depends on something at risk), healthy. inherited_from names the resource a rolled-up health comes from. limit 1 to 500, offset >= 0.',
  tags: ['graph'],
  query: GraphHealthQuery,
  responses: { 200: GraphHealth },
  errors: [400],
  handler: ({ deps, auth, query }) =>
    graphHealth(deps.db, auth.tenant.id, { status: query.status, limit: query.limit, offset: query.offset }),
});

export const getGraphRisks = defineRoute({
  method: 'GET',
  path: '/api/v1/graph/risks',
  auth: 'read',
  summary: 'Single points of failure and cross-domain toxic combinations, most severe first',
  description:
    'spof: graph SPOFs (a resource whose failure alone leaves a service path with no working alternative) and configuration SPOFs (single-AZ database, capacity-1 or single-AZ group, single-AZ load balancer, one NAT gateway for several AZs, a cache without failover); basis says which. toxic_combination: an Internet-exposed instance that reaches a data store with findings in several domains or classified Sensitive. Each names its resources and the open findings it combines.',
  tags: ['graph'],
  responses: { 200: GraphRisks },
  handler: ({ deps, auth }) => graphRisks(deps.db, auth.tenant.id),
});

export const getGraphDrift = defineRoute({
  method: 'GET',
  path: '/api/v1/graph/drift',
  auth: 'read',
  summary: 'Resources added, removed and changed over a window, with the CloudTrail actor',
  description:
    'days 1 to 90 (default 7) back from the latest observation, or since/until (ISO 8601), not both. changed lists each field with before and after. actor is the CloudTrail principal of the latest event naming the resource between the previous snapshot and the one that saw the change, else null.',
  tags: ['graph'],
  query: GraphDriftQuery,
  responses: { 200: GraphDrift },
  errors: [400],
  handler: ({ deps, auth, query }) =>
    graphDrift(deps.db, auth.tenant.id, { days: query.days, since: query.since, until: query.until }),
});

export const getResilienceStatus = defineRoute({
  method: 'GET',
  path: '/api/v1/resilience/status',
  auth: 'read',
  summary: 'Resilience engine status: ready, computing or no_data, with the last run',
  description:
    'Tier team or higher (RESILIENCE_MIN_TIER): below it, 402 {error: "tier_restricted", message, upgrade_required: true}. The engine runs as the pulse.resilience job after every scan.',
  tags: ['resilience'],
  responses: { 200: ResilienceStatus },
  errors: [402],
  handler: ({ deps, auth }) => {
    requireTier(auth.tenant, deps.config.RESILIENCE_MIN_TIER, 'The resilience engine');
    return resilienceStatus(deps.db, auth.tenant.id);
  },
});

export const getResilienceFindings = defineRoute({
  method: 'GET',
  path: '/api/v1/resilience/findings',
  auth: 'read',
  summary: 'Hypothetical failure-mode findings: AZ loss, NAT loss, role revocation, single instance',
  description:
    'From the latest run. Each names its trigger, the impacted resources with the path of ids from the trigger, why, and a recommendation. scenario filters; limit 1 to 500, offset >= 0. Tier team or higher (402 below).',
  tags: ['resilience'],
  query: ResilienceFindingsQuery,
  responses: { 200: ResilienceFindings },
  errors: [400, 402],
  handler: ({ deps, auth, query }) => {
    requireTier(auth.tenant, deps.config.RESILIENCE_MIN_TIER, 'The resilience engine');
    return listResilienceFindings(deps.db, auth.tenant.id, query);
  },
});

export const graphRoutes = [
  getGraphSummary,
  getGraphSearch,
  getBlastRadius,
  getGraphHealth,
  getGraphRisks,
  getGraphDrift,
  getResilienceStatus,
  getResilienceFindings,
];
