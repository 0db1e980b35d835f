export * from './secret-box';
export * from './catalog';
export * from './deliveries';
export * from './outbound';
export * from './jobs';
