export * from './sources';
export * from './morning-report';
export * from './report-jobs';
export * from './subscriptions';
export * from './jobs';
