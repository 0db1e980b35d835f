export { startScheduler, type RunningScheduler, type SchedulerDeps } from './scheduler';
