export * from './plans';
export * from './execute';
export * from './runbooks';
export * from './validate';
export * from './jobs';
