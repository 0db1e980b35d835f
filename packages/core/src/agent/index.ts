export * from './tools';
