import { domainBus } from './events';
import { subscribeGraph } from './graph/subscriptions';
import { subscribeIncidents } from './incidents/subscriptions';
import { subscribeReports } from './reports/subscriptions';
import { subscribeTriage } from './triage/subscriptions';

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
