export * from './model';
export * from './console-links';
export * from './pricing';
export * from './demo/index';
export * from './sync';
