/**
 * @opsi/core: the service's domains, each through its own index (its only public surface), and the
 * kernel they share (errors, the caller's context, the domain bus, group commit, tool definitions).
 * `./wiring` subscribes each domain's handlers to the bus once per process.
 */
import './wiring';
export * from './errors';
export * from './context';
export * from './events';
export * from './group-commit';
export * from './identity';
export * from './audit';
export * from './inventory';
export * from './pulse';
export * from './knowledge';
export * from './plans';
export * from './plan-review';
export * from './graph';
export * from './agent';
export * from './agent-sessions';
export * from './incidents';
export * from './integrations';
export * from './reports';
export * from './triage';
