// Names for the schemas of the OpenAPI document that the SDK's methods answer (generated types:
// src/openapi.gen.ts, from docs/openapi.json).
import type { components } from './openapi.gen';

type S = components['schemas'];

export type GraphNode = S['GraphNode'];
export type ResolutionPlan = S['ResolutionPlan'];
export type PlanStep = S['PlanStep'];
export type PlanStatus = ResolutionPlan['status'];
export type PlanStepStatus = PlanStep['status'];
export type JobAccepted = S['JobAccepted'];
export type Incident = S['Incident'];
export type IncidentSeverity = Incident['severity'];
export type IncidentStatus = Incident['status'];
export type TimelineEvent = S['TimelineEvent'];
export type Risk = S['PlanReviewResult']['overall_risk'];
