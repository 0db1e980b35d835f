export * from './queues';
export * from './producer';
export * from './fairness';
export * from './worker-factory';
export * from './run-log';
export * from './run-hub';
export {
  DelayedError,
  UnrecoverableError,
  Queue,
  QueueEvents,
  Worker,
  defaultRepeatStrategy,
  type Job,
} from 'bullmq';
export * from './timeline-log';
