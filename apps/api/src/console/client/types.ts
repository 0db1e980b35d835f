// The shapes the console reads, from the API's own contracts (types only: nothing of zod is bundled).
import type { z } from 'zod';
import type {
  AuditList,
  AuditTrail,
  BlastRadius,
  FindingDetail,
  FindingList,
  GraphRisks,
  GraphSearchResults,
  GraphSummary,
  Incident,
  IncidentList,
  MorningReportList,
  ResolutionPlan,
  StepRerun,
  TeamResponse,
  TenantToolList,
} from '@opsi/contracts';

export type FindingListT = z.infer<typeof FindingList>;
export type FindingDetailT = z.infer<typeof FindingDetail>;
export type AuditTrailT = z.infer<typeof AuditTrail>;
export type AuditStepT = AuditTrailT['steps'][number];
export type StepRerunT = z.infer<typeof StepRerun>;
export type PlanT = z.infer<typeof ResolutionPlan>;
export type PlanStepT = PlanT['steps'][number];
export type IncidentT = z.infer<typeof Incident>;
export type IncidentListT = z.infer<typeof IncidentList>;
export type GraphSummaryT = z.infer<typeof GraphSummary>;
export type GraphSearchT = z.infer<typeof GraphSearchResults>;
export type GraphRisksT = z.infer<typeof GraphRisks>;
export type BlastRadiusT = z.infer<typeof BlastRadius>;
export type ReportT = z.infer<typeof MorningReportList>['reports'][number];
export type TeamT = z.infer<typeof TeamResponse>;
export type TenantToolsT = z.infer<typeof TenantToolList>;
export type AuditListT = z.infer<typeof AuditList>;
