export { startWorker, type RunningWorker, type WorkerDeps } from './worker';
