import type { Db } from '@opsi/db';
import {
  SEVERITY_RANK,
  appendSteps,
  detectorById,
  evidenceSql,
  reasoningStep,
  runRecorded,
  type AuditStep,
  type DetectorRow,
} from '@opsi/detectors';
import type { JobProducer } from '@opsi/jobs';
import { appendAudit } from '../audit';
import { NotFound } from '../errors';
import { requestScan, runScan } from '../inventory';
import {
  findFinding,
  findFindingId,
  findFindingResourceArns,
  insertGroupEvent,
  insertNotification,
  markFindingReinvestigated,
  markFindingResolved,
  updateFindingDraft,
} from './repository';

export const REINVESTIGATOR = 'pulse.reinvestigator';

/**
 * Queues a reinvestigation of a finding. While one is queued or running for the finding, asking again
 * returns that job (BullMQ deduplication): a double click never runs twice.
 */
export async function requestReinvestigation(
  db: Db,
  producer: JobProducer,
  tenantId: string,
  findingId: string,
) {
  if (!/^[0-9a-f-]{36}$/i.test(findingId)) throw new NotFound('No such finding.');
  const finding = await findFindingId(db, tenantId, findingId);
  if (!finding) throw new NotFound('No such finding.');
  const job = await producer.enqueue(
    'pulse',
    'reinvestigate',
    { tenant_id: tenantId, finding_id: findingId },
    { deduplication: { id: `reinvestigate-${findingId}` } },
  );
  return { job_id: String(job.id), status: 'queued' as const };
}

/**
 * Re-checks a finding's current state: a fresh sync of the tenant's inventory, then the finding's own
 * evidence query (the detector's query limited to its resources). Nothing left: the finding is resolved.
 * Still there: it stays, with its description and severity brought up to date. Either way the steps are
 * appended to its trail, last_reinvestigated_at is set, and a notification says what was found.
 */
export async function executeReinvestigation(db: Db, tenantId: string, findingId: string) {
  const finding = await findFinding(db, tenantId, findingId);
  if (!finding) return { outcome: 'gone' as const };
  const detector = detectorById(finding.check_id);
  const steps: AuditStep[] = [];

  const scan = await requestScan(db, null, tenantId, 'reinvestigation');
  const synced = await runScan(db, scan.id, { detect: null });
  steps.push({
    step_kind: 'tool',
    tool_name: 'inventory.sync',
    title: 'Fresh sync of the inventory',
    query_sql: null,
    status: 'success',
    error_message: null,
    result_preview: { scan_id: synced.id, counts: synced.counts },
    row_count: Number((synced.counts as Record<string, number>).resources ?? 0),
    duration_ms:
      synced.finished_at && synced.started_at
        ? synced.finished_at.getTime() - synced.started_at.getTime()
        : null,
    is_self_correction: false,
    rerunnable: false,
    result_hash: null,
  });

  const arns = (await findFindingResourceArns(db, findingId)).map((r) => r.arn);
  let rows: DetectorRow[] = [];
  if (detector && arns.length) {
    const recorded = await runRecorded(
      db,
      tenantId,
      `Re-check: ${finding.title}`,
      evidenceSql(detector, arns),
    );
    steps.push(...recorded.steps);
    if (!recorded.result) {
      steps.push(
        reasoningStep(
          'Could not re-check',
          'The evidence query failed twice; the finding is left as it was.',
        ),
      );
      await finish(
        db,
        tenantId,
        finding,
        steps,
        'unchanged',
        'could not be re-checked (the evidence query failed)',
      );
      return { outcome: 'unchanged' as const };
    }
    rows = recorded.result.rows as DetectorRow[];
  }
  const still = detector ? rows.length > 0 : true;
  if (!still) {
    steps.push(
      reasoningStep(
        'Resolved',
        `The evidence query returns no row for ${arns.length} resource(s): the condition no longer holds, so the issue is gone.`,
      ),
    );
    await db.transaction().execute(async (tx) => {
      await markFindingResolved(tx, findingId, REINVESTIGATOR);
      await insertGroupEvent(tx, {
        tenant_id: tenantId,
        group_id: finding.group_id,
        finding_id: findingId,
        kind: 'resolved',
        agent: REINVESTIGATOR,
        status: 'resolved',
        detail: JSON.stringify({ scan_id: synced.id }),
      });
      await appendAudit(tx, tenantId, {
        actor: { type: 'system', id: null },
        action: 'finding.status_changed',
        target_type: 'finding',
        target_id: findingId,
        details: { from: finding.status, to: 'resolved', by: REINVESTIGATOR },
      });
    });
    await finish(db, tenantId, finding, steps, 'resolved', 'is resolved: the issue is gone');
    return { outcome: 'resolved' as const };
  }
  const draft = detector ? detector.findings(rows)[0] : undefined;
  if (draft) {
    await updateFindingDraft(db, findingId, draft, SEVERITY_RANK[draft.severity]);
  }
  steps.push(
    reasoningStep(
      'Still present',
      `The evidence query still returns ${rows.length} row(s) for the finding's resources: the issue is still there${draft && draft.severity !== finding.severity ? `; severity is now ${draft.severity} (was ${finding.severity})` : ''}.`,
    ),
  );
  await finish(db, tenantId, finding, steps, 'still_present', 'is still present');
  return { outcome: 'still_present' as const };
}

async function finish(
  db: Db,
  tenantId: string,
  finding: { id: string; title: string },
  steps: AuditStep[],
  outcome: string,
  said: string,
) {
  await db.transaction().execute(async (tx) => {
    await appendSteps(tx, tenantId, finding.id, steps);
    await markFindingReinvestigated(tx, finding.id);
    await insertNotification(tx, {
      tenant_id: tenantId,
      kind: 'reinvestigation.completed',
      title: `Reinvestigation: ${finding.title}`,
      body: `The finding ${said}. Outcome: ${outcome}.`,
      finding_id: finding.id,
    });
  });
}
