import { sql, type Db } from '@opsi/db';
import { appendAudit } from '../audit/audit-log';
import type { Auth } from '../context';

export const LEARNING_STATUSES = ['active', 'archived'] as const;
export type LearningStatus = (typeof LEARNING_STATUSES)[number];

export interface Learning {
  id: string;
  fact: string;
  service: string | null;
  status: LearningStatus;
  created_by: string;
  created_at: Date;
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
  let q = db
    .selectFrom('learnings')
    .select(['id', 'fact', 'service', 'status', 'created_by', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('status', '=', filter.status ?? 'active');
  if (filter.service) q = q.where(sql<boolean>`lower(service) = lower(${filter.service})`);
  for (const word of (filter.query ?? '').split(/\s+/).filter(Boolean).slice(0, 8)) {
    const like = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where((eb) => eb.or([eb('fact', 'ilike', like), eb('service', 'ilike', like)]));
  }
  return q
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(filter.limit ?? 200)
    .execute();
}

/** Records a learning taught by a person; audit-logged in the same transaction. */
export async function createLearning(
  db: Db,
  auth: Auth,
  input: { fact: string; service?: string | undefined },
): Promise<Learning> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('learnings')
      .values({
        tenant_id: auth.tenant.id,
        fact: input.fact,
        service: input.service ?? null,
        created_by: `user:${auth.user.email}`,
      })
      .returning(['id', 'fact', 'service', 'status', 'created_by', 'created_at'])
      .executeTakeFirstOrThrow();
    await appendAudit(tx, auth.tenant.id, {
      actor: {
        type: 'user',
        id: auth.user.id,
        email: auth.user.email,
        token_id: auth.kind === 'token' ? auth.token.id : null,
      },
      action: 'learning.created',
      target_type: 'learning',
      target_id: row.id,
      details: { service: row.service },
    });
    return row;
  });
}
