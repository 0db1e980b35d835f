import { sql, type Database, type Db, type Transaction } from '@opsi/db';

/** Triage's SQL on the tenant's cloudwatch_sns integration. */

type Tx = Db | Transaction<Database>;

/** Installs the tenant's `cloudwatch_sns` tool when it has not (SNS subscribing is installing it). */
export function installSnsTool(tx: Tx, tenantId: string) {
  return tx
    .insertInto('tenant_tools')
    .values({
      tenant_id: tenantId,
      tool_id: 'cloudwatch_sns',
      settings: JSON.stringify({}),
      installed_by: 'sns',
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'tool_id']).doNothing())
    .execute();
}

/** The `cloudwatch_sns` tool's settings under its row lock (`for update`). */
export function lockSnsSettings(tx: Tx, tenantId: string) {
  return tx
    .selectFrom('tenant_tools')
    .select('settings')
    .where('tenant_id', '=', tenantId)
    .where('tool_id', '=', 'cloudwatch_sns')
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/** Merges `patch` (JSON) into the `cloudwatch_sns` tool's settings. */
export function mergeSnsSettings(tx: Tx, tenantId: string, patch: string) {
  return tx
    .updateTable('tenant_tools')
    .set({
      settings: sql`settings || ${patch}::jsonb`,
      updated_at: new Date(),
    })
    .where('tenant_id', '=', tenantId)
    .where('tool_id', '=', 'cloudwatch_sns')
    .execute();
}
