/**
 * The shapes of the tool outputs the built-in engine reads (the tools of @opsi/core's buildAgentTools).
 * The engine sees tool output as `unknown`: these types document what it relies on, and every reader
 * below tolerates a missing field rather than trusting the shape blindly.
 */

export interface FindingSummary {
  id: string;
  title: string;
  severity: string;
  domain: string;
  status: string;
  check_id?: string;
  monthly_savings?: number;
  resources?: number;
}

export interface FindingList {
  total: number;
  findings: FindingSummary[];
}

export interface FindingResource {
  arn: string;
  native_id: string | null;
  name: string | null;
  type: string | null;
  region?: string | null;
  monthly_cost: number | string | null;
  action?: string | null;
  savings?: number | string | null;
  console_url?: string | null;
}

export interface FindingDetail {
  id: string;
  title: string;
  severity: string;
  domain: string;
  status: string;
  narrative?: string | null;
  reasoning?: string | null;
  resources: FindingResource[];
  recommendation: {
    id: string;
    rationale: string;
    action_type: string;
    savings: number | string;
    effort: string;
    priority?: number;
  } | null;
  evidence: Array<{ seq: number; title: string; rows: number | null; query_sql: string | null }>;
}

export interface SavingsSummary {
  monthly_savings: number;
  open_findings: number;
  by_domain: Record<string, number>;
  by_severity: Record<string, number>;
  top_recommendations: Array<{
    finding_id: string;
    title: string;
    action: string;
    monthly_savings: number;
    effort: string;
  }>;
}

export interface ResourceRow {
  arn: string;
  native_id: string | null;
  name: string | null;
  type: string | null;
  account_id?: string | null;
  region?: string | null;
  monthly_cost?: number | string | null;
  service?: string | null;
}

export interface ResourceDetail extends ResourceRow {
  found: true;
  availability_zone?: string | null;
  tags?: Record<string, string> | null;
  attributes?: Record<string, unknown> | null;
  console_url?: string | null;
  open_findings: Array<{ id: string; title: string; severity: string; domain: string; status: string }>;
  recent_changes: Array<{ change: string; changed_fields: string[] | null; observed_at: string | Date }>;
}

export interface NotFound {
  found: false;
  resource: string;
}

export interface GraphNode {
  arn: string;
  native_id: string | null;
  name: string | null;
  type: string | null;
}

export interface BlastRadius {
  resource: GraphNode;
  depth?: number;
  dependents: Array<GraphNode & { depth: number; via?: string[]; impact?: 'fails' | 'degraded' }>;
  count: number;
  fails?: number;
}

export interface GraphRisksOut {
  total: number;
  risks: Array<{
    id: string;
    kind: 'spof' | 'toxic_combination';
    basis: string;
    severity: string;
    title: string;
    reason: string;
    resources: GraphNode[];
    finding_ids: string[];
  }>;
}

export interface DriftItem extends GraphNode {
  at: string;
  actor: string | null;
  event: string | null;
}

export interface GraphDriftOut {
  window: { from: string; to: string };
  added: DriftItem[];
  removed: DriftItem[];
  changed: Array<DriftItem & { fields: Array<{ path: string; before: unknown; after: unknown }> }>;
}

export interface WhatIfOut {
  availability_zone?: string;
  resource?: GraphNode;
  found?: false;
  services_down: Array<GraphNode & { depth: number; via: string[] }>;
  fails: Array<GraphNode & { depth: number; via: string[] }>;
  fails_count: number;
  degraded: Array<GraphNode & { depth: number }>;
  degraded_count: number;
  /** For a zone: its own notable resources, which go down with it. */
  lost_in_zone?: GraphNode[];
}

export interface Neighbours {
  resource: GraphNode;
  neighbours: Array<GraphNode & { direction: string; kind: string }>;
}

export interface RecentChanges {
  since: string | Date;
  changes: Array<{
    arn: string;
    type: string | null;
    change: string;
    changed_fields: string[] | null;
    observed_at: string | Date;
    name: string | null;
  }>;
  cloudtrail: Array<{
    at: string | Date;
    name: string;
    actor: string | null;
    source_ip: string | null;
    arns: string[] | null;
  }>;
}

export interface AlertGroup {
  fingerprint: string | null;
  name: string;
  severity: string | null;
  service: string | null;
  occurrences: number;
  first_at: string | Date;
  last_at: string | Date;
  arns: string[] | null;
}

export interface RecentAlerts {
  alerts: AlertGroup[];
}

export interface SqlResult {
  rows: Array<Record<string, unknown>>;
  row_count: number;
  truncated: boolean;
}

export interface LearningList {
  learnings: Array<{
    id: string;
    fact: string;
    service: string | null;
    created_by: string;
    created_at: string;
  }>;
  count: number;
}

export interface RunbookList {
  runbooks: Array<{
    id: string;
    title: string;
    service: string | null;
    source: 'built_in' | 'tenant';
    applies_to: { detectors: string[]; resource_types: string[]; alert_fingerprints: string[] };
    steps: string[];
  }>;
  count: number;
  error?: string;
}

/** What add_up returns: the sums of resources' monthly costs and of findings' monthly savings. */
export interface AddUp {
  resources: Array<{
    arn: string;
    native_id: string;
    name: string | null;
    type: string;
    monthly_cost: number | null;
  }>;
  resources_monthly_cost_total: number;
  findings: Array<{ id: string; title: string; monthly_savings: number | null }>;
  findings_monthly_savings_total: number;
  /** What fixing the (active) findings would save: each resource once, at its largest savings. */
  findings_monthly_savings_each_resource_once: number;
  not_found: string[];
}
