import type { Db } from '@opsi/db';
import type { PlanResource } from '@opsi/detectors';

/**
 * The seam between resolution plans and runbooks: the steps of the tenant's runbooks (and built-in
 * ones) that apply to a finding, each with the runbook it comes from. Runbooks are being built apart
 * (issue 15: `applies_to {detectors, resource_types, alert_fingerprints}`); until they exist this answers
 * nothing, and plan generation already puts what it answers first, as a "Follow your runbook" step,
 * cited by runbook id.
 */
export async function runbookStepsFor(
  _db: Db,
  _tenantId: string,
  _finding: { checkId: string; resources: PlanResource[] },
): Promise<Array<{ runbook_id: string; text: string }>> {
  return [];
}
