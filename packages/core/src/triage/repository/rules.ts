import { sql, type Database, type Db, type TriageRuleKind, type Transaction } from '@opsi/db';

/** Triage's SQL on resources and rules. */

type Tx = Db | Transaction<Database>;

const RULE_COLUMNS = ['id', 'name', 'kind', 'match', 'action', 'enabled'] as const;

/** The best match of an alert's resource reference: ARN, native id, name, then the tail of an ARN. */
export function findResourceByRef(db: Tx, tenantId: string, ref: string) {
  return db
    .selectFrom('resources')
    .select(['arn', 'name'])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('arn', '=', ref),
        eb('native_id', '=', ref),
        eb('name', '=', ref),
        ...(ref.includes('/') ? [eb('arn', 'like', `%/${ref.replace(/[\\%_]/g, (c) => `\\${c}`)}`)] : []),
      ]),
    )
    .orderBy(
      sql`case when arn = ${ref} then 0 when native_id = ${ref} then 1 when name = ${ref} then 2 else 3 end`,
    )
    .orderBy('arn')
    .limit(1)
    .executeTakeFirst();
}

/** A tenant's enabled rules, oldest first. */
export function findEnabledRules(db: Tx, tenantId: string) {
  return db
    .selectFrom('triage_rules')
    .select([...RULE_COLUMNS])
    .where('tenant_id', '=', tenantId)
    .where('enabled', '=', true)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** All of a tenant's rules, oldest first. */
export function findTenantRules(db: Tx, tenantId: string) {
  return db
    .selectFrom('triage_rules')
    .select([...RULE_COLUMNS])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function insertTriageRule(
  tx: Tx,
  v: {
    tenantId: string;
    name: string;
    kind: TriageRuleKind;
    match: string;
    action: string;
    enabled: boolean;
  },
) {
  return tx
    .insertInto('triage_rules')
    .values({
      tenant_id: v.tenantId,
      name: v.name,
      kind: v.kind,
      match: v.match,
      action: v.action,
      enabled: v.enabled,
    })
    .returning([...RULE_COLUMNS])
    .executeTakeFirstOrThrow();
}

/** A rule's id and kind under its row lock (`for update`). */
export function lockTriageRule(tx: Tx, tenantId: string, id: string) {
  return tx
    .selectFrom('triage_rules')
    .select(['id', 'kind'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export function updateTriageRuleRow(
  tx: Tx,
  id: string,
  set: { name?: string; enabled?: boolean; match?: string; action?: string },
) {
  return tx
    .updateTable('triage_rules')
    .set(set)
    .where('id', '=', id)
    .returning([...RULE_COLUMNS])
    .executeTakeFirstOrThrow();
}

export function deleteTriageRuleRow(tx: Tx, tenantId: string, id: string) {
  return tx
    .deleteFrom('triage_rules')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(['id', 'name', 'kind'])
    .executeTakeFirst();
}
