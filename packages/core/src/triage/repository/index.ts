/** The triage domain's SQL: each function takes the database or the caller's transaction first. */
export * from './events';
export * from './inbox';
export * from './incidents';
export * from './rules';
export * from './sns';
