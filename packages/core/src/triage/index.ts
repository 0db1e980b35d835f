export * from './normalize';
export * from './sns';
export * from './pipeline';
export * from './rules';
export * from './triage';
export * from './subscriptions';
export * from './jobs';
