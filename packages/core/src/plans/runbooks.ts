import type { Db } from '@opsi/db';
import type { PlanResource } from '@opsi/detectors';
import { matchRunbooks } from '../knowledge';

export interface PlanRunbook {
  runbook_id: string;
  title: string;
  source: 'built_in' | 'tenant';
  steps: string[];
}

/**
 * The runbook that applies best to a finding (its detector, its resources' types and service tags, as
 * `matchRunbooks` scores them), for its plan: a tenant's own runbook becomes the plan's first step, a
 * built-in one is quoted in the first step's instructions. Cited by runbook id either way.
 */
export async function runbookStepsFor(
  db: Db,
  tenantId: string,
  finding: { checkId: string; resources: PlanResource[] },
): Promise<PlanRunbook | null> {
  const services = [
    ...new Set(finding.resources.map((r) => r.tags?.service).filter((s): s is string => !!s)),
  ];
  const matched = await matchRunbooks(db, tenantId, {
    checkId: finding.checkId,
    resourceTypes: [...new Set(finding.resources.map((r) => r.type))],
    services,
  });
  // The team's own runbook, when one applies at all, before any built-in one.
  const best = matched.find((r) => r.source === 'tenant') ?? matched[0];
  return best ? { runbook_id: best.id, title: best.title, source: best.source, steps: best.steps } : null;
}
