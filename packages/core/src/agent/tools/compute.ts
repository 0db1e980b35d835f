/** Agent tools: arithmetic over ids, and read-only SQL over the inventory through the sandbox. */
import { z } from 'zod';
import { DEFAULT_LIMITS, runSandboxed, savingsTotal } from '@opsi/detectors';
import { defineTool } from '../../define-tool';
import { findFindingSavings, findResourcesByRefs } from '../repository';

export const add_up = defineTool({
  name: 'add_up',
  description:
    'Add up, from the data itself, the monthly costs of some resources (ARNs, native ids or names) and the monthly savings of some findings (ids): each value with its resource or finding, and the totals (the savings of the findings also with each resource counted once, what fixing them all would save). For any figure an answer would otherwise add up by hand.',
  input: z.object({
    resources: z.array(z.string().min(1)).max(200).default([]),
    findings: z.array(z.string().uuid()).max(200).default([]),
  }),
  async execute(i, { db, tenantId }) {
    const resources = i.resources.length ? await findResourcesByRefs(db, tenantId, i.resources) : [];
    const findings = i.findings.length ? await findFindingSavings(db, tenantId, i.findings) : [];
    // Cents, so the totals are exact.
    const cents = (v: unknown) => Math.round(Number(v ?? 0) * 100);
    const found = new Set(resources.flatMap((r) => [r.arn, r.native_id, r.name ?? '']));
    return {
      resources: resources.map((r) => ({
        ...r,
        monthly_cost: r.monthly_cost === null ? null : Number(r.monthly_cost),
      })),
      resources_monthly_cost_total: resources.reduce((t, r) => t + cents(r.monthly_cost), 0) / 100,
      findings: findings.map((f) => ({
        ...f,
        monthly_savings: f.monthly_savings === null ? null : Number(f.monthly_savings),
      })),
      findings_monthly_savings_total: findings.reduce((t, f) => t + cents(f.monthly_savings), 0) / 100,
      // What fixing them all would save: alternatives on one resource (delete or migrate a volume)
      // count once, at the larger, as savings_summary counts the whole tenant.
      findings_monthly_savings_each_resource_once: findings.length
        ? (
            await savingsTotal(
              db,
              tenantId,
              undefined,
              findings.map((f) => f.id),
            )
          ).monthly
        : 0,
      not_found: [
        ...i.resources.filter((r: string) => !found.has(r)),
        ...i.findings.filter((id: string) => !findings.some((f) => f.id === id)),
      ],
    };
  },
});

export const inventory_sql = defineTool({
  name: 'inventory_sql',
  description:
    'Run one read-only SQL SELECT over the inventory (tables resources, resource_edges, resource_history, metrics_daily, cost_daily, inventory_events, inventory_snapshots, prices). Scoped to this tenant; at most 500 rows.',
  input: z.object({ query: z.string().min(6).max(10_000) }),
  async execute(i, { db, tenantId }) {
    const result = await runSandboxed(db, tenantId, i.query, DEFAULT_LIMITS);
    return { rows: result.rows, row_count: result.rowCount, truncated: result.truncated };
  },
});

/** This group's tools, in catalog order. */
export const COMPUTE_TOOLS = [add_up, inventory_sql] as const;
