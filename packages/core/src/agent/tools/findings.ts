/** Agent tools: findings (the list, one in detail, the savings at stake). */
import { z } from 'zod';
import { getFinding, listFindings, listRecommendations, pulseOverview } from '../../pulse';
import { isActiveFindingStatus, LIFECYCLE_STATUSES } from '@opsi/contracts';
import { Domain, Severity, round2 } from './shared';
import { defineTool } from '../../define-tool';
import { findFindingIdsOnResources } from '../repository';

export const list_findings = defineTool({
  name: 'list_findings',
  description:
    'List findings (problems found in the cloud inventory), filtered by domain, severity or status. Default: active ones (open, acknowledged, in progress), most severe first.',
  input: z.object({
    domain: Domain.optional(),
    severity: Severity.optional(),
    status: z.enum(LIFECYCLE_STATUSES).optional(),
    service: z.string().optional().describe('Only findings on resources tagged service=<this>'),
    account_id: z.string().optional(),
    sort_by: z.enum(['severity', 'savings', 'date']).default('severity'),
    limit: z.number().int().min(1).max(50).default(15),
    offset: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Skip this many: for the next page when total is more than limit'),
  }),
  async execute(i, { db, tenantId }) {
    const rows = await listFindings(db, tenantId, {
      status: i.status,
      severity: i.severity,
      domain: i.domain,
      sortBy: i.sort_by,
      sortDir: 'desc',
      limit: 500,
    });
    let active = i.status ? rows : rows.filter((r) => isActiveFindingStatus(String(r.status)));
    if (i.service || i.account_id) {
      const matching = await findFindingIdsOnResources(db, tenantId, {
        service: i.service,
        accountId: i.account_id,
      });
      const ids = new Set(matching.map((m) => m.finding_id));
      active = active.filter((r) => ids.has(String(r.id)));
    }
    return {
      total: active.length,
      offset: i.offset,
      findings: active.slice(i.offset, i.offset + i.limit).map((r) => ({
        id: r.id,
        title: r.title,
        severity: r.severity,
        domain: r.domain,
        status: r.status,
        check_id: r.check_id,
        monthly_savings: round2(r.savings),
        resources: r.resource_count,
      })),
    };
  },
});

export const get_finding = defineTool({
  name: 'get_finding',
  description:
    'One finding in detail: narrative, resources with monthly cost and console links, the recommendation with savings and effort, and the evidence (the exact queries that found it).',
  input: z.object({ id: z.string().uuid() }),
  async execute(i, { db, tenantId }) {
    const f = await getFinding(db, tenantId, i.id);
    return {
      id: f.id,
      title: f.title,
      severity: f.severity,
      domain: f.domain,
      status: f.status,
      narrative: f.narrative,
      reasoning: f.run_reasoning,
      resources: f.resources.map((r) => ({
        arn: r.arn,
        native_id: r.native_id,
        name: r.name,
        type: r.type,
        region: r.region,
        monthly_cost: r.monthly_cost,
        action: r.action_type,
        savings: r.savings,
        console_url: r.console_url,
      })),
      recommendation: f.recommendation,
      evidence: f.audit.steps
        .filter((s) => s.step_kind === 'query')
        .map((s) => ({ seq: s.seq, title: s.title, rows: s.row_count, query_sql: s.query_sql })),
      detected_at: f.detected_at,
      last_reinvestigated_at: f.last_reinvestigated_at,
    };
  },
});

export const savings_summary = defineTool({
  name: 'savings_summary',
  description:
    'Savings at stake across active findings (each resource counted once), open findings by domain and severity, and the top recommendations by savings.',
  input: z.object({ top: z.number().int().min(1).max(20).default(5) }),
  async execute(i, { db, tenantId }) {
    const overview = await pulseOverview(db, tenantId);
    const recs = (await listRecommendations(db, tenantId)).sort(
      (x, y) => Number(y.savings) - Number(x.savings),
    );
    return {
      monthly_savings: overview.estimated_savings.monthly,
      open_findings: overview.open_findings,
      by_domain: overview.by_domain,
      by_severity: overview.by_severity,
      top_recommendations: recs.slice(0, i.top).map((r) => ({
        finding_id: r.finding_id,
        title: r.title,
        action: r.action_type,
        monthly_savings: round2(r.savings),
        effort: r.effort,
      })),
    };
  },
});

/** This group's tools, in catalog order. */
export const FINDINGS_TOOLS = [list_findings, get_finding, savings_summary] as const;
