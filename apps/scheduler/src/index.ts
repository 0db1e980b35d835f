export { startScheduler, type RunningScheduler, type SchedulerDeps } from './scheduler';
export { reconcileSchedules, scheduleId, TENANT_SCHEDULES } from './reconcile';
