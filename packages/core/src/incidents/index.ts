export * from './incidents';
export * from './queries';
export * from './investigation';
export * from './war-room';
export * from './agent-tools';
export * from './subscriptions';
