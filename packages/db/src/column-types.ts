/**
 * The column types of the schema that the database cannot say: what a timestamp may be written as, JSON
 * columns' shapes, the values a text column's check constraint allows. kysely-codegen reads the schema and
 * applies these through its overrides (packages/db/.kysely-codegenrc.json) to write schema.gen.ts.
 */
import type { ColumnType } from 'kysely';
import type { FindingStatus, INCIDENT_SEVERITIES, INCIDENT_STATUSES } from '@opsi/contracts';

/** A timestamptz column: read as Date, written as Date or ISO string, defaulted by Postgres. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export type Timestamp = ColumnType<Date, Date | string, Date | string>;

export type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;

/** A JSON column that every insert provides (read as T, written as its JSON text). */
export type JsonOf<T> = ColumnType<T, string, string>;

export type Tier = 'free' | 'team' | 'enterprise';

export type Role = 'owner' | 'admin' | 'member' | 'viewer';

export type TokenScope = 'read' | 'read_write';

export interface AuditActor {
  type: 'user' | 'operator' | 'system';
  id: string | null;
  email?: string | null;
  token_id?: string | null;
}

export type RunStatus = 'queued' | 'running' | 'completed' | 'failed';

export type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export type JsonColumn<T> = ColumnType<T, string | undefined, string>;

export type NumericColumn = ColumnType<number | null, number | null | undefined, number | null>;

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

export type { FindingStatus };

export type LearningSource = 'user' | 'agent' | 'plan';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export type PlanStatus = 'generating' | 'ready' | 'failed' | 'finalizing' | 'resolved';

export type PlanStepStatus = 'pending' | 'verifying' | 'verified' | 'confirmed' | 'skipped' | 'failed_check';

export type IncidentSeverity = (typeof INCIDENT_SEVERITIES)[number];

export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

export type TriageRuleKind = 'dedupe' | 'suppress' | 'correlate' | 'route';

export type TriageAction = 'new' | 'deduplicated' | 'suppressed' | 'correlated' | 'incident_opened';
