export * from './common';
export * from './identity';
export * from './runs';
export * from './pulse';
export * from './knowledge';
export * from './graph';
export * from './incidents';
export * from './triage';
