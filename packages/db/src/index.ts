export * from './client';
export * from './migrate';
export * from './types';
export { sql } from 'kysely';
export type { Transaction, Kysely, RawBuilder, Selectable } from 'kysely';
export * from './vocabulary';
