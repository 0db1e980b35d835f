import { z } from 'zod';
import { Timestamp } from './common';

export const LearningStatus = z.enum(['active', 'archived']);

export const LearningsQuery = z.object({
  status: LearningStatus.default('active'),
  service: z.string().trim().min(1).max(128).optional(),
});

export const CreateLearningBody = z
  .object({
    fact: z.string().trim().min(1).max(2000),
    service: z.string().trim().min(1).max(128).optional(),
  })
  .meta({ id: 'CreateLearningBody' });

export const Learning = z
  .object({
    id: z.string(),
    fact: z.string(),
    service: z.string().nullable(),
    status: LearningStatus,
    source: z.enum(['user', 'agent', 'plan']),
    created_by: z.string(),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    used_count: z.number().int(),
  })
  .meta({ id: 'Learning' });

export const PatchLearningBody = z
  .object({ status: LearningStatus })
  .strict()
  .meta({ id: 'PatchLearningBody' });

export const LearningList = z.object({ learnings: z.array(Learning) }).meta({ id: 'LearningList' });
