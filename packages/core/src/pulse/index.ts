export * from './findings';
export * from './reinvestigate';
