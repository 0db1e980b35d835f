export * from './learnings';
export * from './runbooks';
