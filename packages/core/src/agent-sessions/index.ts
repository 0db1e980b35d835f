export * from './budget';
export * from './sessions';
export * from './runs';
export * from './investigations';
export * from './jobs';
