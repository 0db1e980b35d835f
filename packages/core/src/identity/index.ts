export * from './passwords';
export * from './sign-in-limits';
export * from './tenants';
export * from './users';
export * from './tokens';
export * from './browser-sessions';
export * from './demo';
