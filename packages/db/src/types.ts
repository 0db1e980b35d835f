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
  /** Set for a war room's session: its turns see the incident. */
  incident_id: ColumnType<string | null, string | null | undefined, string | null>;
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
  /** Never below any seq handed out for this run (reserved in blocks before use). */
  seq_reserved: ColumnType<number, number | undefined, number>;
  reply: string | null;
  error: string | null;
  terminal_event: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  incident_id: ColumnType<string | null, string | null | undefined, string | null>;
  purpose: ColumnType<'investigation' | null, 'investigation' | null | undefined, 'investigation' | null>;
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

type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type JsonColumn<T> = ColumnType<T, string | undefined, string>;
type NumericColumn = ColumnType<number | null, number | null | undefined, number | null>;

export type ConnectionKind = 'demo' | 'terraform_state' | 'aws';
export type ScanStatus = 'queued' | 'running' | 'completed' | 'failed';

/** One AWS call a scan was refused: the IAM action to grant, where, and AWS's answer. */
export interface ScanWarning {
  service: string;
  action: string;
  region: string;
  code: string;
  message: string;
}

export interface CloudConnectionsTable {
  id: Generated<string>;
  tenant_id: string;
  kind: ConnectionKind;
  config: JsonColumn<Record<string, unknown>>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** One Terraform state of a tenant's `terraform_state` connection, and what its last read found. */
export interface TerraformStatesTable {
  id: Generated<string>;
  tenant_id: string;
  connection_id: string;
  /** `s3://bucket/key` or the file's absolute path: unique per tenant. */
  source: string;
  config: JsonColumn<Record<string, unknown>>;
  format: string | null;
  format_version: string | null;
  terraform_version: string | null;
  serial: ColumnType<number | null, number | null | undefined, number | null>;
  lineage: string | null;
  etag: string | null;
  last_modified: NullableTimestamp;
  last_read_at: NullableTimestamp;
  last_error: string | null;
  last_error_at: NullableTimestamp;
  managed_count: number | null;
  resource_count: number | null;
  tainted_count: number | null;
  unsupported_by_type: JsonColumn<Record<string, number>>;
  skipped_by_reason: JsonColumn<Record<string, number>>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface DemoEnvironmentsTable {
  tenant_id: string;
  seed: number;
  size: 'small' | 'medium' | 'large' | 'xlarge';
  epoch: string; // YYYY-MM-DD
  day: ColumnType<number, number | undefined, number>;
  commands: JsonColumn<Array<{ day: number; command: string }>>;
  updated_at: UpdatedAt;
}

export interface InventoryScansTable {
  id: Generated<string>;
  tenant_id: string;
  connection_id: string;
  status: ColumnType<ScanStatus, ScanStatus | undefined, ScanStatus>;
  phase: ColumnType<string, string | undefined, string>;
  counts: JsonColumn<Record<string, number>>;
  error: string | null;
  /** Completed without reading everything: see `warnings`. */
  partial: ColumnType<boolean, boolean | undefined, boolean>;
  /** The calls refused during the scan: {service, action, region, code, message}. */
  warnings: JsonColumn<ScanWarning[]>;
  snapshot_id: string | null;
  requested_by: ColumnType<string, string | undefined, string>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface InventorySnapshotsTable {
  id: Generated<string>;
  tenant_id: string;
  connection_id: string;
  scan_id: string | null;
  observed_at: Timestamp;
  taken_at: CreatedAt;
  resource_count: number;
  edge_count: number;
  created_count: ColumnType<number, number | undefined, number>;
  updated_count: ColumnType<number, number | undefined, number>;
  deleted_count: ColumnType<number, number | undefined, number>;
}

export interface ResourcesTable {
  id: Generated<string>;
  tenant_id: string;
  connection_id: string;
  arn: string;
  type: string;
  native_id: string;
  account_id: string;
  region: string;
  availability_zone: string | null;
  name: string | null;
  tags: JsonColumn<Record<string, string>>;
  attributes: JsonColumn<Record<string, unknown>>;
  size_value: NumericColumn;
  size_unit: string | null;
  monthly_cost: NumericColumn;
  console_url: string | null;
  content_hash: string;
  first_seen: Timestamp;
  last_seen: Timestamp;
  snapshot_id: string;
  deleted_at: NullableTimestamp;
}

export interface ResourceEdgesTable {
  tenant_id: string;
  from_arn: string;
  to_arn: string;
  kind: string;
  source: string;
  confidence: number;
  first_seen: Timestamp;
  last_seen: Timestamp;
  snapshot_id: string;
}

export interface ResourceHistoryTable {
  id: Generated<number>;
  tenant_id: string;
  arn: string;
  type: string;
  snapshot_id: string;
  observed_at: Timestamp;
  change: 'created' | 'updated' | 'deleted';
  changed_fields: ColumnType<string[], string[] | undefined, string[]>;
  before: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  after: ColumnType<Record<string, unknown> | null, string | null, string | null>;
}

export interface MetricsDailyTable {
  tenant_id: string;
  arn: string;
  metric: string;
  day: string;
  avg: number | null;
  max: number | null;
  sum: number | null;
}

export interface CostDailyTable {
  tenant_id: string;
  arn: string;
  day: string;
  product_code: string;
  usage_type: string;
  unblended_cost: number;
}

export interface InventoryEventsTable {
  id: Generated<number>;
  tenant_id: string;
  kind: 'cloudtrail' | 'alert';
  at: Timestamp;
  name: string;
  actor: string | null;
  source_ip: string | null;
  fingerprint: string | null;
  severity: string | null;
  service: string | null;
  arns: ColumnType<string[], string[] | undefined, string[]>;
  payload: JsonColumn<Record<string, unknown>>;
  dedupe_key: string;
}

export interface PricesTable {
  region: string;
  sku: string;
  unit: string;
  usd: number;
  source: string;
}

export type FindingStatus = 'open' | 'acknowledged' | 'in_progress' | 'resolved' | 'dismissed' | 'confirmed';

export interface FindingGroupsTable {
  id: Generated<string>;
  tenant_id: string;
  fingerprint: string;
  check_id: string;
  domain: string;
  title: string;
  highest_severity: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface FindingsTable {
  id: Generated<string>;
  tenant_id: string;
  group_id: string;
  check_id: string;
  fingerprint: string;
  domain: string;
  title: string;
  severity: string;
  severity_rank: number;
  status: ColumnType<FindingStatus, FindingStatus | undefined, FindingStatus>;
  narrative: string;
  run_reasoning: ColumnType<string, string | undefined, string>;
  producing_agent: string;
  confidence: number;
  estimated_savings: ColumnType<number, number | undefined, number>;
  sighting_count: ColumnType<number, number | undefined, number>;
  regressed: ColumnType<boolean, boolean | undefined, boolean>;
  scan_id: string | null;
  detected_at: CreatedAt;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_reinvestigated_at: NullableTimestamp;
  resolved_at: NullableTimestamp;
  resolved_by: string | null;
  updated_at: UpdatedAt;
}

export interface FindingResourcesTable {
  finding_id: string;
  tenant_id: string;
  arn: string;
  type: string;
  native_id: string;
  name: string | null;
  account_id: string;
  region: string;
  measured_size: NumericColumn;
  size_unit: string | null;
  monthly_cost: NumericColumn;
  console_url: string | null;
  action_type: string;
  savings: ColumnType<number, number | undefined, number>;
}

export interface RecommendationsTable {
  id: Generated<string>;
  tenant_id: string;
  finding_id: string;
  rationale: string;
  action_type: string;
  savings: ColumnType<number, number | undefined, number>;
  effort: 'low' | 'medium' | 'high';
  priority: number;
  created_at: CreatedAt;
}

export interface FindingAuditStepsTable {
  id: Generated<string>;
  tenant_id: string;
  finding_id: string;
  seq: number;
  step_kind: 'query' | 'tool' | 'reasoning';
  tool_name: string;
  title: string;
  query_sql: string | null;
  status: 'success' | 'error';
  error_message: string | null;
  result_preview: ColumnType<unknown, string | null, string | null>;
  row_count: number | null;
  duration_ms: number | null;
  is_self_correction: ColumnType<boolean, boolean | undefined, boolean>;
  rerunnable: ColumnType<boolean, boolean | undefined, boolean>;
  result_hash: string | null;
  executed_at: CreatedAt;
}

export interface FindingGroupEventsTable {
  id: Generated<number>;
  tenant_id: string;
  group_id: string;
  finding_id: string | null;
  kind: string;
  agent: string;
  status: string | null;
  detail: JsonColumn<Record<string, unknown>>;
  at: CreatedAt;
}

export interface NotificationsTable {
  id: Generated<string>;
  tenant_id: string;
  kind: string;
  title: string;
  body: string;
  finding_id: string | null;
  report_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  read_at: NullableTimestamp;
}

export interface LearningsTable {
  id: Generated<string>;
  tenant_id: string;
  fact: string;
  service: string | null;
  status: Generated<'active' | 'archived'>;
  /** `user:<email>`, or the agent or job that wrote it. */
  created_by: string;
  created_at: CreatedAt;
  source: ColumnType<LearningSource, LearningSource | undefined, LearningSource>;
  last_used_at: NullableTimestamp;
  used_count: ColumnType<number, number | undefined, number>;
  archived_at: NullableTimestamp;
}

export type LearningSource = 'user' | 'agent' | 'plan';

export interface MorningReportsTable {
  id: Generated<string>;
  tenant_id: string;
  period_from: Timestamp;
  period_to: Timestamp;
  generated_at: CreatedAt;
  requested_by: string;
  headline: string;
  sections: JsonColumn<Record<string, unknown>>;
}

export interface TenantToolsTable {
  tenant_id: string;
  tool_id: string;
  status: ColumnType<'active' | 'disabled', 'active' | 'disabled' | undefined, 'active' | 'disabled'>;
  /** Never a secret: URLs and secrets live only in secret_ciphertext. */
  settings: JsonColumn<Record<string, unknown>>;
  secret_ciphertext: string | null;
  installed_by: string;
  installed_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface NotifierDeliveriesTable {
  id: Generated<string>;
  tenant_id: string;
  tool_id: string;
  event_kind: string;
  subject_id: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  response_status: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  delivered_at: NullableTimestamp;
}

export interface RunbooksTable {
  id: Generated<string>;
  tenant_id: string;
  title: string;
  service: string | null;
  applies_to: JsonColumn<Record<string, string[]>>;
  steps: JsonColumn<string[]>;
  created_by: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type PlanStatus = 'generating' | 'ready' | 'failed' | 'finalizing' | 'resolved';
export type PlanStepStatus = 'pending' | 'verifying' | 'verified' | 'confirmed' | 'skipped' | 'failed_check';

export interface ResolutionPlansTable {
  id: Generated<string>;
  tenant_id: string;
  group_id: string;
  finding_id: string;
  status: ColumnType<PlanStatus, PlanStatus | undefined, PlanStatus>;
  stale: ColumnType<boolean, boolean | undefined, boolean>;
  error: string | null;
  engine: ColumnType<string, string | undefined, string>;
  attempt: ColumnType<number, number | undefined, number>;
  evidence_hash: string | null;
  generation_started_at: ColumnType<Date, Date | string | undefined, Date | string>;
  final_check: JsonColumn<{ outcome: 'resolved' | 'still_present'; summary: string; at: string }> | null;
  created_by: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  resolved_at: NullableTimestamp;
}

export interface ResolutionPlanStepsTable {
  plan_id: string;
  tenant_id: string;
  seq: number;
  title: string;
  instructions: string;
  citations: JsonColumn<Array<{ kind: string; ref: string }>>;
  fix_command: string | null;
  verification: JsonColumn<{ command: string; done_when: string }> | null;
  check_spec: JsonColumn<Record<string, unknown>> | null;
  how_to_confirm: string | null;
  status: ColumnType<PlanStepStatus, PlanStepStatus | undefined, PlanStepStatus>;
  final: ColumnType<boolean, boolean | undefined, boolean>;
  last_check: JsonColumn<{ at: string; outcome: string; output_preview: string }> | null;
  skip_reason: string | null;
  done_by: string | null;
  done_at: NullableTimestamp;
}

export interface RealizedSavingsTable {
  id: Generated<string>;
  tenant_id: string;
  plan_id: string;
  attempt: number;
  group_id: string;
  finding_id: string;
  monthly_usd: ColumnType<number, number, number>;
  realized_at: CreatedAt;
}

/** One run of the resilience engine over a snapshot (the pulse.resilience job). */
export interface ResilienceRunsTable {
  id: Generated<string>;
  tenant_id: string;
  snapshot_id: string | null;
  scan_id: string | null;
  status: 'computing' | 'ready' | 'failed';
  started_at: CreatedAt;
  finished_at: NullableTimestamp;
  scenarios: Generated<number>;
  /** Wire-shaped resilience findings, most severe first. */
  findings: ColumnType<unknown[], string | undefined, string>;
  /** Wire-shaped risks, as GET /graph/risks answers them for that snapshot. */
  risks: ColumnType<unknown[], string | undefined, string>;
  stats: ColumnType<Record<string, unknown>, string | undefined, string>;
  error: string | null;
}

export type IncidentSeverity = 'SEV1' | 'SEV2' | 'SEV3' | 'SEV4';
export type IncidentStatus = 'open' | 'investigating' | 'mitigated' | 'resolved';

export interface IncidentsTable {
  id: Generated<string>;
  tenant_id: string;
  title: string;
  description: string | null;
  severity: ColumnType<IncidentSeverity, IncidentSeverity | undefined, IncidentSeverity>;
  status: ColumnType<IncidentStatus, IncidentStatus | undefined, IncidentStatus>;
  source: ColumnType<'manual' | 'triage', 'manual' | 'triage' | undefined, 'manual' | 'triage'>;
  created_by: string;
  recurrence_of: string | null;
  started_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_alert_at: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  resolved_at: NullableTimestamp;
}

export interface IncidentResourcesTable {
  tenant_id: string;
  incident_id: string;
  arn: string;
  added_at: CreatedAt;
}

export interface IncidentEventsTable {
  id: Generated<number>;
  tenant_id: string;
  incident_id: string;
  kind: string;
  body: string;
  actor: string;
  data: JsonColumn<Record<string, unknown>>;
  run_id: string | null;
  created_at: CreatedAt;
}

export interface WarRoomsTable {
  id: Generated<string>;
  tenant_id: string;
  incident_id: string;
  session_id: string;
  created_by: string | null;
  created_at: CreatedAt;
}

export interface WarRoomParticipantsTable {
  room_id: string;
  user_id: string;
  joined_at: CreatedAt;
}

export type TriageRuleKind = 'dedupe' | 'suppress' | 'correlate' | 'route';
export type TriageAction = 'new' | 'deduplicated' | 'suppressed' | 'correlated' | 'incident_opened';

export interface TriageRulesTable {
  id: Generated<string>;
  tenant_id: string;
  name: string;
  kind: TriageRuleKind;
  match: JsonColumn<Record<string, unknown>>;
  action: JsonColumn<Record<string, unknown>>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

export interface TriageEventsTable {
  id: Generated<number>;
  tenant_id: string;
  at: CreatedAt;
  source: string;
  fingerprint: string;
  title: string;
  severity: string;
  arn: string | null;
  action: TriageAction;
  incident_id: string | null;
  count: ColumnType<number, number | undefined, number>;
  first_at: Timestamp;
  last_at: Timestamp;
  status: ColumnType<string, string | undefined, string>;
  labels: JsonColumn<Record<string, unknown>>;
}

export interface TriageInboxTable {
  id: Generated<number>;
  tenant_id: string;
  batch_id: string;
  alert: JsonColumn<Record<string, unknown>>;
  received_at: CreatedAt;
  event_id: number | null;
  action: TriageAction | null;
  processed_at: NullableTimestamp;
}

export interface TriageRefsTable {
  tenant_id: string;
  ref: string;
  event_id: number | null;
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
  cloud_connections: CloudConnectionsTable;
  demo_environments: DemoEnvironmentsTable;
  terraform_states: TerraformStatesTable;
  inventory_scans: InventoryScansTable;
  inventory_snapshots: InventorySnapshotsTable;
  resources: ResourcesTable;
  resource_edges: ResourceEdgesTable;
  resource_history: ResourceHistoryTable;
  metrics_daily: MetricsDailyTable;
  cost_daily: CostDailyTable;
  inventory_events: InventoryEventsTable;
  prices: PricesTable;
  finding_groups: FindingGroupsTable;
  findings: FindingsTable;
  finding_resources: FindingResourcesTable;
  recommendations: RecommendationsTable;
  finding_audit_steps: FindingAuditStepsTable;
  finding_group_events: FindingGroupEventsTable;
  notifications: NotificationsTable;
  learnings: LearningsTable;
  resolution_plans: ResolutionPlansTable;
  resolution_plan_steps: ResolutionPlanStepsTable;
  realized_savings: RealizedSavingsTable;
  morning_reports: MorningReportsTable;
  tenant_tools: TenantToolsTable;
  notifier_deliveries: NotifierDeliveriesTable;
  runbooks: RunbooksTable;
  resilience_runs: ResilienceRunsTable;
  incidents: IncidentsTable;
  incident_resources: IncidentResourcesTable;
  incident_events: IncidentEventsTable;
  war_rooms: WarRoomsTable;
  war_room_participants: WarRoomParticipantsTable;
  triage_rules: TriageRulesTable;
  triage_events: TriageEventsTable;
  triage_inbox: TriageInboxTable;
  triage_refs: TriageRefsTable;
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
