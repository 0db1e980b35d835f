import { z } from 'zod';
import { Timestamp } from './common';

const ReportFinding = z.object({
  finding_id: z.string(),
  group_id: z.string(),
  title: z.string(),
  severity: z.string(),
  domain: z.string(),
  check_id: z.string(),
  status: z.string(),
  at: Timestamp,
});

const DriftItem = z.object({
  resource_id: z.string().nullable(),
  arn: z.string(),
  native_id: z.string().nullable(),
  type: z.string(),
  name: z.string().nullable(),
  at: Timestamp,
  actor: z.string().nullable(),
  fields: z.array(z.string()).optional(),
});

const ReportIncident = z.object({
  incident_id: z.string(),
  title: z.string(),
  severity: z.string(),
  status: z.string(),
  created_at: z.string(),
  resolved_at: z.string().nullable(),
});

export const MorningReport = z
  .object({
    id: z.string(),
    generated_at: Timestamp,
    period: z.object({ from: Timestamp, to: Timestamp }),
    requested_by: z.string(),
    headline: z.string(),
    sections: z.object({
      new_findings: z.array(ReportFinding),
      resolved_findings: z.array(
        ReportFinding.extend({ resolved_by: z.string().nullable(), savings_monthly: z.number() }),
      ),
      regressed_findings: z.array(ReportFinding),
      savings: z.object({
        open_monthly: z.number(),
        realized_monthly: z.number(),
        resolved_estimated_monthly: z.number(),
        realized: z.array(
          z.object({
            plan_id: z.string(),
            finding_id: z.string(),
            group_id: z.string(),
            monthly: z.number(),
          }),
        ),
      }),
      drift: z.object({
        added: z.array(DriftItem),
        removed: z.array(DriftItem),
        changed: z.array(DriftItem),
        totals: z.object({ added: z.number().int(), removed: z.number().int(), changed: z.number().int() }),
      }),
      incidents: z.object({
        opened: z.array(ReportIncident),
        resolved: z.array(ReportIncident),
        open: z.array(ReportIncident),
      }),
      top_clusters: z.array(
        z.object({
          group_id: z.string(),
          finding_id: z.string(),
          title: z.string(),
          severity: z.string(),
          domain: z.string(),
          check_id: z.string(),
          resources: z.number().int(),
          duplicates: z.number().int(),
          savings_monthly: z.number(),
          regressed: z.boolean(),
          why: z.string(),
        }),
      ),
    }),
  })
  .meta({ id: 'MorningReport' });

export const MorningReportList = z
  .object({ reports: z.array(MorningReport) })
  .meta({ id: 'MorningReportList' });

export const LimitQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

export const CatalogToolList = z
  .object({
    tools: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        category: z.string(),
        description: z.string(),
        kind: z.enum(['connector', 'notifier', 'agent_tool', 'alert_source']),
        installed: z.boolean(),
      }),
    ),
  })
  .meta({ id: 'CatalogToolList' });

export const TenantTool = z
  .object({
    id: z.string(),
    name: z.string(),
    category: z.string(),
    kind: z.enum(['connector', 'notifier', 'agent_tool', 'alert_source']),
    status: z.enum(['active', 'disabled', 'connected', 'built_in']),
    installed_at: Timestamp.nullable(),
    settings: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'TenantTool' });

export const TenantToolList = z.object({ tools: z.array(TenantTool) }).meta({ id: 'TenantToolList' });

export const InstallToolBody = z
  .object({
    tool_id: z.string().trim().min(1).max(64),
    settings: z
      .object({
        url: z.string().trim().min(1).max(2000).optional(),
        secret: z.string().min(1).max(256).optional(),
        events: z.array(z.string().min(1).max(64)).max(10).optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .meta({ id: 'InstallToolBody' });

export const ToolIdParams = z.object({ id: z.string().min(1).max(64) });

export const Runbook = z
  .object({
    id: z.string(),
    title: z.string(),
    service: z.string().nullable(),
    applies_to: z.object({
      detectors: z.array(z.string()),
      resource_types: z.array(z.string()),
      alert_fingerprints: z.array(z.string()),
    }),
    steps: z.array(z.string()),
    source: z.enum(['built_in', 'tenant']),
    created_by: z.string().nullable(),
    updated_at: Timestamp.meta({
      description: 'Last change: a tenant runbook’s last write; a built-in runbook’s text, as shipped',
    }),
  })
  .meta({ id: 'Runbook' });

export const RunbookList = z.object({ runbooks: z.array(Runbook) }).meta({ id: 'RunbookList' });

export const RunbooksQuery = z.object({
  service: z.string().trim().min(1).max(128).optional(),
  finding_id: z.uuid().optional(),
  source: z.enum(['built_in', 'tenant']).optional(),
});

const Names = z.array(z.string().trim().min(1).max(200)).max(50);

export const CreateRunbookBody = z
  .object({
    title: z.string().trim().min(1).max(200),
    service: z.string().trim().min(1).max(128).optional(),
    applies_to: z
      .object({
        detectors: Names.optional(),
        resource_types: Names.optional(),
        alert_fingerprints: Names.optional(),
      })
      .strict()
      .optional(),
    steps: z.array(z.string().trim().min(1).max(2000)).min(1).max(30),
  })
  .strict()
  .meta({ id: 'CreateRunbookBody' });
