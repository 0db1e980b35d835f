import type { DomainBus } from '../events';
import { citedIds, incidentTurnContext, recordInvestigationEvent } from './investigation';

const STARTED =
  'The agent started investigating: alerts, affected resources and their dependencies, recent changes, metrics, open findings and similar past incidents.';

/** What incidents do when other domains act: an investigation run's start and end go on its timeline. */
export function subscribeIncidents(bus: DomainBus): void {
  bus.on('agent_run.started', async (r) => {
    if (r.purpose !== 'investigation' || !r.incidentId) return;
    await recordInvestigationEvent(
      r.db,
      r.timeline,
      r.tenantId,
      r.incidentId,
      r.runId,
      'investigation_started',
      STARTED,
      {
        session_id: r.sessionId,
      },
    );
  });
  bus.on('agent_run.ended', async (r) => {
    if (r.purpose !== 'investigation' || !r.incidentId) return;
    const completed = r.outcome === 'completed';
    const text = completed ? r.text : `The investigation failed: ${r.text}`;
    await recordInvestigationEvent(
      r.db,
      r.timeline,
      r.tenantId,
      r.incidentId,
      r.runId,
      completed ? 'investigation_completed' : 'investigation_failed',
      text,
      { session_id: r.sessionId, ...(completed ? { cited: citedIds(text) } : {}) },
    );
  });
  bus.answer('incident.turn_context', ({ db, tenantId, incidentId }) =>
    incidentTurnContext(db, tenantId, incidentId),
  );
}
