export * from './scans';
export * from './terraform-states';
export * from './jobs';
