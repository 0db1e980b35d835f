import { z } from 'zod';
import { Timestamp } from './common';

const Limit = z.coerce.number().int().min(1).max(500).default(50);
const Offset = z.coerce.number().int().min(0).default(0);
const Instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((v) => new Date(v.length === 10 ? `${v}T00:00:00Z` : v));

export const HealthStatus = z.enum(['healthy', 'degraded', 'at_risk', 'critical']);
const Severity = z.enum(['critical', 'high', 'medium', 'low']);

/** A graph node, wherever one appears. */
export const GraphNode = z
  .object({
    id: z.string(),
    arn: z.string(),
    native_id: z.string(),
    type: z.string(),
    name: z.string().nullable(),
    account_id: z.string(),
    region: z.string(),
  })
  .meta({ id: 'GraphNode' });

/** A path parameter naming a resource: our id, the ARN (URL-encoded) or the native id. */
export const ResourceRefParams = z.object({ id: z.string().min(1).max(2048) });

export const GraphSummary = z
  .object({
    nodes: z.number().int(),
    edges: z.number().int(),
    structural_edges: z.number().int(),
    dependency_edges: z.number().int(),
    inferred_edges: z.number().int(),
    derived_edges: z.number().int(),
    by_type: z.record(z.string(), z.number().int()),
    health: z.object({
      healthy: z.number().int(),
      degraded: z.number().int(),
      at_risk: z.number().int(),
      critical: z.number().int(),
    }),
    last_scan_at: Timestamp.nullable(),
  })
  .meta({ id: 'GraphSummary' });

export const GraphSearchQuery = z.object({
  q: z.string().trim().min(1).max(200),
  type: z.string().trim().min(1).max(100).optional(),
  limit: Limit,
});
export const GraphSearchResults = z
  .object({ results: z.array(GraphNode.extend({ open_findings: z.number().int() })) })
  .meta({ id: 'GraphSearchResults' });

export const BlastRadiusQuery = z.object({ depth: z.coerce.number().int().min(1).max(10).default(3) });
export const BlastRadius = z
  .object({
    resource: GraphNode,
    depth: z.number().int(),
    impacted: z.array(
      GraphNode.extend({
        depth: z.number().int(),
        via: z.array(z.string()),
        path: z.array(z.string()),
        sources: z.array(z.string()),
        impact: z.enum(['fails', 'degraded']),
      }),
    ),
    by_depth: z.record(z.string(), z.number().int()),
    total: z.number().int(),
  })
  .meta({ id: 'BlastRadius' });

const FindingCounts = z.object({
  critical: z.number().int(),
  high: z.number().int(),
  medium: z.number().int(),
  low: z.number().int(),
  info: z.number().int(),
});
export const GraphHealthQuery = z.object({ status: HealthStatus.optional(), limit: Limit, offset: Offset });
export const GraphHealth = z
  .object({
    resources: z.array(
      GraphNode.extend({
        health: HealthStatus,
        open_findings: FindingCounts,
        inherited_from: z.string().nullable(),
      }),
    ),
    totals: z.object({
      healthy: z.number().int(),
      degraded: z.number().int(),
      at_risk: z.number().int(),
      critical: z.number().int(),
    }),
    total: z.number().int(),
  })
  .meta({ id: 'GraphHealth' });

export const GraphRisks = z
  .object({
    risks: z.array(
      z.object({
        id: z.string(),
        kind: z.enum(['spof', 'toxic_combination']),
        basis: z.string(),
        title: z.string(),
        severity: Severity,
        reason: z.string(),
        resources: z.array(GraphNode),
        finding_ids: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: 'GraphRisks' });

export const GraphDriftQuery = z
  .object({
    days: z.coerce.number().int().min(1).max(90).optional(),
    since: Instant.optional(),
    until: Instant.optional(),
  })
  .refine((q) => q.days === undefined || (q.since === undefined && q.until === undefined), {
    message: 'give days, or since/until, not both',
    path: ['days'],
  })
  .refine((q) => !q.since || !q.until || q.since <= q.until, {
    message: 'since must not be after until',
    path: ['since'],
  });
const DriftItem = GraphNode.extend({
  at: Timestamp,
  actor: z.string().nullable(),
  event: z.string().nullable(),
});
export const GraphDrift = z
  .object({
    window: z.object({ from: Timestamp, to: Timestamp }),
    added: z.array(DriftItem),
    removed: z.array(DriftItem),
    changed: z.array(
      DriftItem.extend({
        fields: z.array(z.object({ path: z.string(), before: z.unknown(), after: z.unknown() })),
      }),
    ),
    truncated: z.boolean(),
  })
  .meta({ id: 'GraphDrift' });

export const ResilienceStatus = z
  .object({
    status: z.enum(['ready', 'computing', 'no_data']),
    last_run_at: Timestamp.nullable(),
    scenarios: z.number().int(),
    findings: z.number().int(),
    snapshot_id: z.string().nullable(),
  })
  .meta({ id: 'ResilienceStatus' });

export const ResilienceScenario = z.enum(['az_loss', 'nat_loss', 'role_revocation', 'single_instance']);
export const ResilienceFindingsQuery = z.object({
  scenario: ResilienceScenario.optional(),
  limit: Limit,
  offset: Offset,
});
export const ResilienceFindings = z
  .object({
    findings: z.array(
      z.object({
        id: z.string(),
        scenario: ResilienceScenario,
        title: z.string(),
        severity: Severity,
        trigger: z.object({
          kind: z.enum(['availability_zone', 'resource']),
          ref: z.string(),
          resource: GraphNode.nullable(),
        }),
        impacted: z.array(GraphNode.extend({ path: z.array(z.string()) })),
        reason: z.string(),
        recommendation: z.string(),
      }),
    ),
    total: z.number().int(),
  })
  .meta({ id: 'ResilienceFindings' });
