import { type Db, type LearningSource } from '@opsi/db';
import { appendAudit } from '../audit';
import type { Auth } from '../context';
import { BadRequest, NotFound } from '../errors';
import {
  findLearningStatusForUpdate,
  findLearnings,
  insertLearning,
  markLearningsUsedRows,
  updateLearningStatus,
} from './repository';

export const LEARNING_STATUSES = ['active', 'archived'] as const;
export type LearningStatus = (typeof LEARNING_STATUSES)[number];
export const LEARNING_SOURCES = ['user', 'agent', 'plan'] as const;

export interface Learning {
  id: string;
  fact: string;
  service: string | null;
  status: LearningStatus;
  source: LearningSource;
  created_by: string;
  created_at: Date;
  last_used_at: Date | null;
  used_count: number;
}

export interface LearningFilter {
  status?: LearningStatus | undefined;
  /** Exact service name, case-insensitive. */
  service?: string | undefined;
  /** Words the fact or service must contain, case-insensitive. */
  query?: string | undefined;
  limit?: number | undefined;
}

/** A tenant's learnings, newest first; active ones unless another status is asked for. */
export async function listLearnings(
  db: Db,
  tenantId: string,
  filter: LearningFilter = {},
): Promise<Learning[]> {
  return findLearnings(db, tenantId, {
    status: filter.status ?? 'active',
    service: filter.service,
    query: filter.query,
    limit: filter.limit ?? 200,
  });
}

const userActor = (auth: Auth) => ({
  type: 'user' as const,
  id: auth.user.id,
  email: auth.user.email,
  token_id: auth.kind === 'token' ? auth.token.id : null,
});

/** Records a learning taught by a person; audit-logged in the same transaction. */
export async function createLearning(
  db: Db,
  auth: Auth,
  input: { fact: string; service?: string | undefined },
): Promise<Learning> {
  return db.transaction().execute(async (tx) => {
    const row = await insertLearning(tx, {
      tenant_id: auth.tenant.id,
      fact: input.fact,
      service: input.service ?? null,
      source: 'user',
      created_by: `user:${auth.user.email}`,
    });
    await appendAudit(tx, auth.tenant.id, {
      actor: userActor(auth),
      action: 'learning.created',
      target_type: 'learning',
      target_id: row.id,
      details: { service: row.service, source: 'user' },
    });
    return row;
  });
}

/**
 * Records a learning written by the service itself: by the agent (a correction or discovery) or by a
 * resolution plan's final check (source `plan`, created_by naming the plan, e.g. `plan:<id>`). For the
 * plans of issue 12: `recordLearning(db, tenantId, {fact, service, source: 'plan', createdBy})`.
 */
export async function recordLearning(
  db: Db,
  tenantId: string,
  input: { fact: string; service?: string | null; source: 'agent' | 'plan'; createdBy: string },
): Promise<Learning> {
  const fact = input.fact.trim();
  if (!fact || fact.length > 2000) throw new BadRequest('fact must be 1 to 2000 characters');
  return db.transaction().execute(async (tx) => {
    const row = await insertLearning(tx, {
      tenant_id: tenantId,
      fact,
      service: input.service ?? null,
      source: input.source,
      created_by: input.createdBy,
    });
    await appendAudit(tx, tenantId, {
      actor: { type: 'system', id: null },
      action: 'learning.created',
      target_type: 'learning',
      target_id: row.id,
      details: { service: row.service, source: input.source, created_by: input.createdBy },
    });
    return row;
  });
}

/** Archives (or reactivates) a learning; another tenant's id is 404. Audit-logged. */
export async function setLearningStatus(
  db: Db,
  auth: Auth,
  id: string,
  status: LearningStatus,
): Promise<Learning> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new NotFound('No such learning.');
  return db.transaction().execute(async (tx) => {
    const before = await findLearningStatusForUpdate(tx, auth.tenant.id, id);
    if (!before) throw new NotFound('No such learning.');
    const row = await updateLearningStatus(tx, auth.tenant.id, id, status);
    if (before.status !== status)
      await appendAudit(tx, auth.tenant.id, {
        actor: userActor(auth),
        action: status === 'archived' ? 'learning.archived' : 'learning.reactivated',
        target_type: 'learning',
        target_id: id,
        details: { from: before.status, to: status },
      });
    return row;
  });
}

/** Counts a use of each learning the agent cited in an answer (last_used_at, used_count). */
export async function markLearningsUsed(db: Db, tenantId: string, ids: string[]): Promise<number> {
  const unique = [...new Set(ids.filter((id) => /^[0-9a-f-]{36}$/i.test(id)))];
  if (!unique.length) return 0;
  const result = await markLearningsUsedRows(db, tenantId, unique);
  return Number(result.numUpdatedRows);
}
