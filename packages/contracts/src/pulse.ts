import { z } from 'zod';
import { DOMAINS, FINDING_STATUSES, SEVERITIES } from './vocabulary';

export const Domain = z.enum(DOMAINS);
export const Severity = z.enum(SEVERITIES);
export const FindingStatusFilter = z.enum(FINDING_STATUSES);

export const FindingsQuery = z.object({
  status: FindingStatusFilter.optional(),
  severity: Severity.optional(),
  domain: Domain.optional(),
  sort_by: z.enum(['severity', 'date', 'savings', 'effort', 'status']).default('severity'),
  sort_dir: z.enum(['asc', 'desc']).default('desc'),
});

export const FindingListItem = z
  .object({
    id: z.string(),
    title: z.string(),
    severity: Severity,
    domain: Domain,
    status: FindingStatusFilter,
    check_id: z.string(),
    group_id: z.string(),
    regressed: z.boolean(),
    savings: z.number(),
    effort: z.enum(['low', 'medium', 'high']).nullable(),
    resource_count: z.number().int(),
    detected_at: z.string(),
    last_seen_at: z.string(),
  })
  .meta({ id: 'FindingListItem' });
export const FindingList = z.object({ findings: z.array(FindingListItem) }).meta({ id: 'FindingList' });

export const FindingResource = z.object({
  arn: z.string(),
  type: z.string(),
  native_id: z.string(),
  name: z.string().nullable(),
  account_id: z.string(),
  region: z.string(),
  measured_size: z.number().nullable(),
  size_unit: z.string().nullable(),
  monthly_cost: z.number().nullable(),
  console_url: z.string().nullable(),
  action_type: z.string(),
  savings: z.number(),
});

export const AuditStepView = z
  .object({
    seq: z.number().int(),
    step_kind: z.enum(['query', 'tool', 'reasoning']),
    tool_name: z.string(),
    title: z.string(),
    query_sql: z.string().nullable(),
    status: z.enum(['success', 'error']),
    error_message: z.string().nullable(),
    result_preview: z.unknown(),
    row_count: z.number().int().nullable(),
    duration_ms: z.number().int().nullable(),
    is_self_correction: z.boolean(),
    rerunnable: z.boolean(),
    executed_at: z.string(),
  })
  .meta({ id: 'AuditStep' });
export const AuditSummary = z.object({
  total_steps: z.number().int(),
  total_queries: z.number().int(),
  failures: z.number().int(),
  self_corrections: z.number().int(),
});
export const AuditTrail = z
  .object({ finding_id: z.string(), steps: z.array(AuditStepView), summary: AuditSummary })
  .meta({ id: 'AuditTrail' });

export const FindingDetail = z
  .object({
    id: z.string(),
    title: z.string(),
    severity: Severity,
    domain: Domain,
    status: FindingStatusFilter,
    check_id: z.string(),
    narrative: z.string(),
    run_reasoning: z.string(),
    producing_agent: z.string(),
    confidence: z.number(),
    detected_at: z.string(),
    last_seen_at: z.string(),
    last_reinvestigated_at: z.string().nullable(),
    resolved_at: z.string().nullable(),
    resolved_by: z.string().nullable(),
    regressed: z.boolean(),
    resources: z.array(FindingResource),
    recommendation: z
      .object({
        id: z.string(),
        rationale: z.string(),
        action_type: z.string(),
        savings: z.number(),
        effort: z.string(),
        priority: z.number().int(),
      })
      .nullable(),
    group: z.object({
      id: z.string(),
      highest_severity: Severity,
      members: z.array(
        z.object({
          id: z.string(),
          status: FindingStatusFilter,
          producing_agent: z.string(),
          detected_at: z.string(),
          last_seen_at: z.string(),
          sighting_count: z.number().int(),
        }),
      ),
      history: z.array(
        z.object({
          finding_id: z.string().nullable(),
          kind: z.string(),
          agent: z.string(),
          status: z.string().nullable(),
          at: z.string(),
        }),
      ),
    }),
    audit: z.object({ steps: z.array(AuditStepView), summary: AuditSummary }),
  })
  .meta({ id: 'FindingDetail' });

export const FindingStatusBody = z.object({ status: z.string() }).meta({ id: 'FindingStatusBody' });

export const StepRerun = z
  .object({
    seq: z.number().int(),
    rows: z.array(z.record(z.string(), z.unknown())),
    row_count: z.number().int(),
    duration_ms: z.number().int(),
    truncated: z.boolean(),
    differs: z.boolean(),
    recorded_row_count: z.number().int().nullable(),
    executed_at: z.string(),
  })
  .meta({ id: 'StepRerun' });

export const JobAccepted = z.object({ job_id: z.string(), status: z.string() }).meta({ id: 'JobAccepted' });

export const RecommendationList = z
  .object({
    recommendations: z.array(
      z.object({
        id: z.string(),
        finding_id: z.string(),
        title: z.string(),
        domain: Domain,
        severity: Severity,
        status: FindingStatusFilter,
        rationale: z.string(),
        action_type: z.string(),
        savings: z.number(),
        effort: z.enum(['low', 'medium', 'high']),
        priority: z.number().int(),
      }),
    ),
  })
  .meta({ id: 'RecommendationList' });

export const ResolvedQuery = z.object({ domain: Domain.optional() });
export const ResolvedList = z
  .object({
    resolved: z.array(
      z.object({
        group_id: z.string(),
        finding_id: z.string(),
        title: z.string(),
        domain: Domain,
        severity: Severity,
        check_id: z.string(),
        resolved_at: z.string().nullable(),
        resolved_by: z.string().nullable(),
        savings: z.number(),
        evidence: z.unknown(),
      }),
    ),
  })
  .meta({ id: 'ResolvedList' });

export const PulseOverview = z
  .object({
    open_findings: z.number().int(),
    by_domain: z.record(z.string(), z.number().int()),
    by_severity: z.record(z.string(), z.number().int()),
    estimated_savings: z.object({
      monthly: z.number(),
      grounded: z.number(),
      estimated: z.number(),
      resources: z.number().int(),
    }),
    realized_savings: z.object({
      this_month: z.number(),
      total: z.number(),
      resolved_plans: z.number().int(),
    }),
    coverage: z.object({
      resources: z.number().int(),
      types: z.number().int(),
      accounts: z.number().int(),
      regions: z.number().int(),
      detectors: z.number().int(),
      last_scan: z
        .object({
          id: z.string(),
          status: z.string(),
          finished_at: z.string().nullable(),
          created_at: z.string(),
          partial: z.boolean().meta({
            description:
              'The scan completed without reading everything (calls refused, regions not enabled): what it could not read is kept as the previous scan saw it.',
          }),
          warnings: z
            .array(
              z.object({
                service: z.string(),
                action: z.string(),
                region: z.string(),
                code: z.string(),
                message: z.string(),
              }),
            )
            .meta({ description: 'Each AWS call the scan was refused, once per action and region.' }),
          missing_permissions: z.array(z.string()).meta({
            description:
              'The IAM actions to add to the scanning identity (the refused ones of the warnings), sorted; docs/aws-iam-policy.json has them all.',
          }),
        })
        .nullable(),
    }),
  })
  .meta({ id: 'PulseOverview' });

export const NotificationsQuery = z.object({
  unread: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
export const NotificationList = z
  .object({
    notifications: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        title: z.string(),
        body: z.string(),
        finding_id: z.string().nullable(),
        report_id: z.string().nullable(),
        created_at: z.string(),
        read: z.boolean(),
      }),
    ),
  })
  .meta({ id: 'NotificationList' });
export const ReadAllResponse = z
  .object({ success: z.literal(true), marked: z.number().int() })
  .meta({ id: 'ReadAll' });
