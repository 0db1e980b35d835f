// Shapes of the endpoints the OpenAPI document does not describe yet (resolution plans, incidents),
// written from the API decisions ("Wave 2 shapes"). Each moves to the generated
// types once its routes are in docs/openapi.json.

export interface GraphNode {
  id: string;
  arn: string;
  native_id: string;
  type: string;
  name: string | null;
  account_id: string;
  region: string;
}

export type PlanStatus = 'generating' | 'ready' | 'failed' | 'finalizing' | 'resolved';
export type PlanStepStatus = 'pending' | 'verifying' | 'verified' | 'confirmed' | 'skipped' | 'failed_check';

export interface PlanStep {
  seq: number;
  title: string;
  instructions: string;
  citations: Array<{ kind: string; ref: string }>;
  fix_command: null | { command: string; executed_by_service: false };
  verification: null | { command: string; done_when: string };
  how_to_confirm: null | string;
  status: PlanStepStatus;
  final: boolean;
  last_check: null | { at: string; outcome: string; output_preview: string };
}

export interface ResolutionPlan {
  id: string;
  finding_id: string;
  group_id: string;
  status: PlanStatus;
  stale: boolean;
  created_at: string;
  updated_at: string;
  error: string | null;
  steps: PlanStep[];
  final_check: null | { outcome: 'resolved' | 'still_present'; summary: string; at: string };
  job_id?: string;
}

export interface JobAccepted {
  job_id: string;
  status: string;
}

export type IncidentSeverity = 'SEV1' | 'SEV2' | 'SEV3' | 'SEV4';
export type IncidentStatus = 'open' | 'investigating' | 'mitigated' | 'resolved';

export interface Incident {
  id: string;
  title: string;
  severity: IncidentSeverity;
  status: IncidentStatus;
  description: string | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  source: 'manual' | 'triage';
  resources: GraphNode[];
  war_room: null | { id: string; session_id: string };
}

export interface TimelineEvent {
  id: number | string;
  incident_id: string;
  kind: string;
  body: unknown;
  actor: string | null;
  created_at: string;
}

export type Risk = 'low' | 'medium' | 'high' | 'critical';
