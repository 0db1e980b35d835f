export { createApp, allRoutes } from './app';
export { startApi, type RunningApi } from './server';
export type { ApiDeps } from './deps';
export { resolveRevision } from './revision';
export { createApiRuntime, type ApiRuntime, type RunServices } from './runtime';
