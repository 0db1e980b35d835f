import type { Migration } from 'kysely';
import * as identityAndAudit from './20261122T0800_identity-and-audit';
import * as agentRuns from './20261122T0900_agent-runs';
import * as inventory from './20261122T1000_inventory';
import * as pulse from './20261122T1100_pulse';
import * as learnings from './20261122T1200_learnings';
import * as dailyFactsWithoutTenantFk from './20261124T0200_daily-facts-without-tenant-fk';
import * as runSeqReserved from './20261125T0130_run-seq-reserved';
import * as graphAndResilience from './20261125T0200_graph-and-resilience';
import * as graphSearchIndex from './20261125T0203_graph-search-index';
import * as resolutionPlans from './20261125T0300_resolution-plans';
import * as incidentsAndTriage from './20261125T0400_incidents-and-triage';
import * as knowledge from './20261125T0600_knowledge';
import * as sandboxAdvisoryLocks from './20261128T1000_sandbox-advisory-locks';
import * as agentSessionsPerTenant from './20261128T1001_agent-sessions-per-tenant';
import * as terraformStates from './20261128T1200_terraform-states';
import * as scanWarnings from './20261128T1400_scan-warnings';
import * as demoSizeXlarge from './20261128T1600_demo-size-xlarge';

/** Every migration in order of its timestamped name; frozen once merged, forward only. */
export const migrations: Record<string, Migration> = {
  '20261122T0800_identity-and-audit': identityAndAudit,
  '20261122T0900_agent-runs': agentRuns,
  '20261122T1000_inventory': inventory,
  '20261122T1100_pulse': pulse,
  '20261122T1200_learnings': learnings,
  '20261124T0200_daily-facts-without-tenant-fk': dailyFactsWithoutTenantFk,
  '20261125T0130_run-seq-reserved': runSeqReserved,
  '20261125T0200_graph-and-resilience': graphAndResilience,
  '20261125T0203_graph-search-index': graphSearchIndex,
  '20261125T0300_resolution-plans': resolutionPlans,
  '20261125T0400_incidents-and-triage': incidentsAndTriage,
  '20261125T0600_knowledge': knowledge,
  '20261128T1000_sandbox-advisory-locks': sandboxAdvisoryLocks,
  '20261128T1001_agent-sessions-per-tenant': agentSessionsPerTenant,
  '20261128T1200_terraform-states': terraformStates,
  '20261128T1400_scan-warnings': scanWarnings,
  '20261128T1600_demo-size-xlarge': demoSizeXlarge,
};
