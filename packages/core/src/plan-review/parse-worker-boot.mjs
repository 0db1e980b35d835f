// Development and tests run TypeScript sources through tsx, which a worker thread does not inherit:
// this plain module registers it in the worker, then loads the parser task (parse-pool.ts). The
// compiled build (scripts/build.mjs) runs packages/core/dist/parse.worker.js instead.
import { register } from 'tsx/esm/api';

register();
const task = await import('./parse.worker.ts');
export const parseTask = task.parseTask;
