export * from './findings';
export * from './reinvestigate';
export * from './jobs';
