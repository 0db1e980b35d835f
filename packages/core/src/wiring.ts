import { domainBus } from './events';
import { subscribeGraph } from './graph';
import { subscribeIncidents } from './incidents';
import { subscribeReports } from './reports';
import { subscribeTriage } from './triage';

/** Subscribes each domain's handlers to the process's bus, once (imported by @opsi/core's index). */
let wired = false;
export function wireDomains(): void {
  if (wired) return;
  wired = true;
  subscribeIncidents(domainBus);
  // A scan's end: resilience first, then notifications, then triage (the order the worker kept).
  subscribeGraph(domainBus);
  subscribeReports(domainBus);
  subscribeTriage(domainBus);
}
wireDomains();
