import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** A timestamptz column: read as Date, written as Date or ISO string, defaulted by Postgres. */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export type Tier = 'free' | 'team' | 'enterprise';
export type Role = 'owner' | 'admin' | 'member' | 'viewer';
export type TokenScope = 'read' | 'read_write';

export interface TenantsTable {
  id: Generated<string>;
  slug: string;
  name: string;
  tier: ColumnType<Tier, Tier | undefined, Tier>;
  timezone: ColumnType<string, string | undefined, string>;
  daily_agent_budget: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  deleted_at: NullableTimestamp;
}

export interface UsersTable {
  id: Generated<string>;
  tenant_id: string;
  email: string;
  name: string;
  password_hash: string;
  role: ColumnType<Role, Role | undefined, Role>;
  created_at: CreatedAt;
  deleted_at: NullableTimestamp;
}

export interface ApiTokensTable {
  id: Generated<string>;
  tenant_id: string;
  user_id: string;
  name: string;
  scope: TokenScope;
  token_hash: string;
  token_hint: string;
  created_at: CreatedAt;
  expires_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface BrowserSessionsTable {
  id: Generated<string>;
  tenant_id: string;
  user_id: string;
  secret_hash: string;
  csrf_token: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
  ended_at: NullableTimestamp;
}

export interface AuditActor {
  type: 'user' | 'operator' | 'system';
  id: string | null;
  email?: string | null;
  token_id?: string | null;
}

export interface AuditLogTable {
  id: Generated<string>;
  tenant_id: string;
  seq: number;
  at: Timestamp;
  actor: Json<AuditActor>;
  action: string;
  target_type: string;
  target_id: string | null;
  details: Json<Record<string, unknown>>;
  prev_hash: string;
  hash: string;
}

export interface ServiceMetaTable {
  key: string;
  value: Json<unknown>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type RunStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface AgentSessionsTable {
  id: string;
  tenant_id: string;
  created_by: string | null;
  name: string;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface AgentRunsTable {
  id: Generated<string>;
  tenant_id: string;
  session_id: string;
  token_id: string | null;
  status: ColumnType<RunStatus, RunStatus | undefined, RunStatus>;
  prompt: string;
  selected_tools: string[] | null;
  attempts: ColumnType<number, number | undefined, number>;
  last_seq: ColumnType<number, number | undefined, number>;
  reply: string | null;
  error: string | null;
  terminal_event: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface AgentMessagesTable {
  id: Generated<string>;
  tenant_id: string;
  session_id: string;
  run_id: string | null;
  role: 'user' | 'assistant';
  content: string;
  created_at: CreatedAt;
}

/** Every table the service owns, as Kysely sees it. */
export interface Database {
  tenants: TenantsTable;
  users: UsersTable;
  api_tokens: ApiTokensTable;
  browser_sessions: BrowserSessionsTable;
  audit_log: AuditLogTable;
  service_meta: ServiceMetaTable;
  agent_sessions: AgentSessionsTable;
  agent_runs: AgentRunsTable;
  agent_messages: AgentMessagesTable;
}

export type Tenant = Selectable<TenantsTable>;
export type NewTenant = Insertable<TenantsTable>;
export type TenantUpdate = Updateable<TenantsTable>;
export type User = Selectable<UsersTable>;
export type ApiToken = Selectable<ApiTokensTable>;
export type BrowserSession = Selectable<BrowserSessionsTable>;
export type AuditEntry = Selectable<AuditLogTable>;
export type AgentSession = Selectable<AgentSessionsTable>;
export type AgentRun = Selectable<AgentRunsTable>;
export type AgentMessage = Selectable<AgentMessagesTable>;
