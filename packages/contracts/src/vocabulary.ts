/**
 * The service's shared vocabularies, in one file: every package that names a finding status, a
 * severity, a domain, an incident status or a queue takes it from here.
 *
 * Glossary
 * - finding status: where a finding stands. `open`, `acknowledged`, `in_progress`, `resolved` and
 *   `dismissed` are its lifecycle, set by people (PATCH) and by plans; `confirmed` is set only by
 *   clustering: a later sighting of an issue a similar finding of the same group already holds.
 * - active: counted. The statuses whose findings count in totals and savings, appear in the default
 *   list, the graph's health and the reports. `confirmed` is NOT active: a clustered duplicate is hidden
 *   from the default list and its savings are never counted twice (api-v1, "Duplicate clustering").
 * - unresolved: the issue is still there. Active, and `confirmed`: a resolution plan may be opened on
 *   any of them, a cluster counts as open while any of it is unresolved, and a plan's final check
 *   resolves all of them, the whole cluster.
 * - severity: a finding's or an alert's, most severe first. Incidents use SEV1..SEV4 instead.
 */

export const FINDING_STATUSES = [
  'open',
  'acknowledged',
  'in_progress',
  'resolved',
  'dismissed',
  'confirmed',
] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

/** The statuses a person (or a plan) sets; `confirmed` is clustering's alone. */
export const LIFECYCLE_STATUSES = ['open', 'acknowledged', 'in_progress', 'resolved', 'dismissed'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

/** Counted: in totals, savings, the default list, the graph and the reports. */
export const ACTIVE_FINDING_STATUSES = ['open', 'acknowledged', 'in_progress'] as const;
export type ActiveFindingStatus = (typeof ACTIVE_FINDING_STATUSES)[number];

/** The issue is still there: active, or a clustered duplicate of one. */
export const UNRESOLVED_FINDING_STATUSES = [...ACTIVE_FINDING_STATUSES, 'confirmed'] as const;

export function isActiveFindingStatus(status: string): status is ActiveFindingStatus {
  return (ACTIVE_FINDING_STATUSES as readonly string[]).includes(status);
}
export function isUnresolvedFindingStatus(status: string): boolean {
  return (UNRESOLVED_FINDING_STATUSES as readonly string[]).includes(status);
}

/** Most severe first. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type SeverityName = (typeof SEVERITIES)[number];
/** Higher is more severe. */
export const SEVERITY_RANK: Record<SeverityName, number> = {
  critical: 5,
  high: 4,
  medium: 3,
  low: 2,
  info: 1,
};

export const DOMAINS = ['finops', 'security', 'sre'] as const;
export type DomainName = (typeof DOMAINS)[number];

export const INCIDENT_STATUSES = ['open', 'investigating', 'mitigated', 'resolved'] as const;
export const INCIDENT_SEVERITIES = ['SEV1', 'SEV2', 'SEV3', 'SEV4'] as const;

/** The worker pools' queues (the jobs catalog declares each one's jobs; config validates WORKER_QUEUES). */
export const QUEUE_NAMES = ['agent', 'pulse', 'plans', 'reports', 'triage'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];
