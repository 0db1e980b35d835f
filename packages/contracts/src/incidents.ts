import { z } from 'zod';
import { Timestamp } from './common';
import { GraphNode } from './graph';
import { INCIDENT_SEVERITIES, INCIDENT_STATUSES } from './vocabulary';

export const IncidentSeverity = z.enum(INCIDENT_SEVERITIES);
export const IncidentStatus = z.enum(INCIDENT_STATUSES);

const Limit = z.coerce.number().int().min(1).max(500).default(50);
const Offset = z.coerce.number().int().min(0).default(0);

export const IncidentIdParams = z.object({ id: z.uuid({ error: 'id must be an incident id (a UUID).' }) });

export const IncidentsQuery = z.object({
  status: IncidentStatus.optional(),
  severity: IncidentSeverity.optional(),
  limit: Limit,
  offset: Offset,
});

export const CreateIncidentBody = z
  .object({
    title: z.string().trim().min(1).max(300),
    severity: IncidentSeverity.default('SEV3'),
    description: z.string().trim().max(10_000).optional(),
  })
  .meta({ id: 'CreateIncidentBody' });

export const PatchIncidentBody = z
  .object({
    status: IncidentStatus.optional(),
    severity: IncidentSeverity.optional(),
    title: z.string().trim().min(1).max(300).optional(),
    description: z.string().trim().max(10_000).nullable().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'Send at least one of status, severity, title, description.',
  })
  .meta({ id: 'PatchIncidentBody' });

export const WarRoomRef = z.object({ id: z.string(), session_id: z.string() });

export const Incident = z
  .object({
    id: z.string(),
    title: z.string(),
    severity: IncidentSeverity,
    status: IncidentStatus,
    description: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    resolved_at: Timestamp.nullable(),
    started_at: Timestamp,
    source: z.enum(['manual', 'triage']),
    created_by: z.string(),
    resources: z.array(GraphNode),
    war_room: WarRoomRef.nullable(),
    recurrence_of: z.string().nullable(),
    alert_count: z.number().int(),
  })
  .meta({ id: 'Incident' });

export const IncidentList = z.object({ incidents: z.array(Incident) }).meta({ id: 'IncidentList' });

export const TimelineEvent = z
  .object({
    id: z.number().int(),
    incident_id: z.string(),
    kind: z.string(),
    body: z.string(),
    actor: z.string(),
    created_at: Timestamp,
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'TimelineEvent' });

export const TimelineQuery = z.object({
  after_id: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(500),
});

export const TimelineStreamQuery = z.object({ after_id: z.coerce.number().int().min(0).optional() });

export const Timeline = z
  .object({ incident_id: z.string(), events: z.array(TimelineEvent) })
  .meta({ id: 'Timeline' });

export const TimelineNoteBody = z
  .object({ body: z.string().trim().min(1).max(10_000) })
  .meta({ id: 'TimelineNoteBody' });

export const InvestigationStarted = z
  .object({ job_id: z.string(), status: z.literal('queued'), run_id: z.string(), session_id: z.string() })
  .meta({ id: 'InvestigationStarted' });

export const WarRoom = z
  .object({
    id: z.string(),
    incident_id: z.string(),
    session_id: z.string(),
    created_at: Timestamp,
    participants: z.array(z.object({ user_id: z.string(), name: z.string() })),
  })
  .meta({ id: 'WarRoom' });
