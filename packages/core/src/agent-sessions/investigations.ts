import type { Auth } from '../context';
import { NotFound } from '../errors';
import { incidentHeadline } from '../incidents';
import { startRun, type RunStartDeps } from './runs';

/**
 * Starts an agent investigation of an incident: a durable agent run on the agent pool (its own session,
 * bound to the incident), spending one unit of the caller's agent budget. The 404 comes before any spend.
 */
export async function startInvestigation(deps: RunStartDeps, auth: Auth, incidentId: string) {
  const incident = await incidentHeadline(deps.db, auth.tenant.id, incidentId);
  if (!incident) throw new NotFound('No such incident.');
  const { runId, sessionId } = await startRun(deps, auth, {
    prompt: `Investigate incident ${incident.id}: ${incident.title}`,
    incidentId: incident.id,
    purpose: 'investigation',
    sessionName: `Investigation: ${incident.title}`.slice(0, 200),
  });
  return { job_id: runId, status: 'queued' as const, run_id: runId, session_id: sessionId };
}
