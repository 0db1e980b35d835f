import { domainBus } from './events';
import { subscribeIncidents } from './incidents/subscriptions';

/** Subscribes each domain's handlers to the process's bus, once (imported by @opsi/core's index). */
let wired = false;
export function wireDomains(): void {
  if (wired) return;
  wired = true;
  subscribeIncidents(domainBus);
}
wireDomains();
