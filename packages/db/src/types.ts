import type { Insertable, Selectable, Updateable } from 'kysely';
import type { DB } from './schema.gen';

export * from './column-types';

/** The schema's tables, as kysely-codegen reads them from the migrated database (`npm run db:types`). */
export type Database = DB;

export type Tenant = Selectable<Database['tenants']>;
export type NewTenant = Insertable<Database['tenants']>;
export type TenantUpdate = Updateable<Database['tenants']>;
export type User = Selectable<Database['users']>;
export type ApiToken = Selectable<Database['api_tokens']>;
export type BrowserSession = Selectable<Database['browser_sessions']>;
export type AuditEntry = Selectable<Database['audit_log']>;
export type AgentSession = Selectable<Database['agent_sessions']>;
export type AgentRun = Selectable<Database['agent_runs']>;
export type AgentMessage = Selectable<Database['agent_messages']>;
