export * from './scans';
export * from './terraform-states';
