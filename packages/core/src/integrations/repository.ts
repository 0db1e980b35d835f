import { sql, type Db } from '@opsi/db';

// Installed tools

/** The tenant's cloud connections (kind and when made). */
export function findConnectionKinds(db: Db, tenantId: string) {
  return db
    .selectFrom('cloud_connections')
    .select(['kind', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .execute();
}

export function findTenantTools(db: Db, tenantId: string) {
  return db
    .selectFrom('tenant_tools')
    .select(['tool_id', 'status', 'settings', 'installed_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('tool_id')
    .execute();
}

/** Whether the tenant has the tool installed, its row locked for the transaction. */
export function findTenantToolForUpdate(tx: Db, tenantId: string, toolId: string) {
  return tx
    .selectFrom('tenant_tools')
    .select('tool_id')
    .where('tenant_id', '=', tenantId)
    .where('tool_id', '=', toolId)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Installs the tool, or reconfigures it (status active again) keeping an SNS subscription's state
 * recorded by the service.
 */
export function upsertTenantTool(
  tx: Db,
  row: {
    tenant_id: string;
    tool_id: string;
    settings: Record<string, unknown>;
    secret_ciphertext: string | null;
    installed_by: string;
  },
) {
  return tx
    .insertInto('tenant_tools')
    .values({
      tenant_id: row.tenant_id,
      tool_id: row.tool_id,
      settings: JSON.stringify(row.settings),
      secret_ciphertext: row.secret_ciphertext,
      installed_by: row.installed_by,
    })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'tool_id']).doUpdateSet({
        // An SNS subscription's state (recorded by the service, not set by the installer) is kept.
        settings: sql<string>`(case when tenant_tools.settings ? 'subscriptions'
            then jsonb_build_object('subscriptions', tenant_tools.settings->'subscriptions')
            else '{}'::jsonb end) || ${JSON.stringify(row.settings)}::jsonb`,
        secret_ciphertext: row.secret_ciphertext,
        status: 'active',
        updated_at: new Date(),
      }),
    )
    .returning(['status', 'settings', 'installed_at'])
    .executeTakeFirstOrThrow();
}

export function deleteTenantTool(tx: Db, tenantId: string, toolId: string) {
  return tx
    .deleteFrom('tenant_tools')
    .where('tenant_id', '=', tenantId)
    .where('tool_id', '=', toolId)
    .returning('tool_id')
    .executeTakeFirst();
}

/** Ids of the tenant's active notifiers subscribed to an event. */
export function findSubscribedNotifiers(db: Db, tenantId: string, event: string) {
  return sql<{ tool_id: string }>`
    select tool_id from tenant_tools
    where tenant_id = ${tenantId} and status = 'active' and tool_id in ('webhook', 'slack')
      and settings->'events' @> to_jsonb(${event}::text)
    order by tool_id`.execute(db);
}

/** A notifier's sealed target and status. */
export function findToolSecret(db: Db, tenantId: string, toolId: string) {
  return db
    .selectFrom('tenant_tools')
    .select(['secret_ciphertext', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('tool_id', '=', toolId)
    .executeTakeFirst();
}

// Deliveries

/** One delivery per tool for the event and subject; an existing one stays as it is. */
export async function insertDeliveries(
  db: Db,
  tenantId: string,
  toolIds: string[],
  event: string,
  subjectId: string,
) {
  await db
    .insertInto('notifier_deliveries')
    .values(
      toolIds.map((tool_id) => ({ tenant_id: tenantId, tool_id, event_kind: event, subject_id: subjectId })),
    )
    .onConflict((oc) => oc.columns(['tenant_id', 'tool_id', 'event_kind', 'subject_id']).doNothing())
    .execute();
}

export function findPendingDeliveries(
  db: Db,
  tenantId: string,
  toolIds: string[],
  event: string,
  subjectId: string,
) {
  return db
    .selectFrom('notifier_deliveries')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('event_kind', '=', event)
    .where('subject_id', '=', subjectId)
    .where('tool_id', 'in', toolIds)
    .where('status', '=', 'pending')
    .execute();
}

export function findDelivery(db: Db, tenantId: string, deliveryId: string) {
  return db
    .selectFrom('notifier_deliveries')
    .select(['id', 'tenant_id', 'tool_id', 'event_kind', 'subject_id', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/** Counts a failed attempt; `final` records the delivery failed, else it stays pending. */
export async function markDeliveryAttemptFailed(
  db: Db,
  deliveryId: string,
  message: string,
  responseStatus: number | null,
  final: boolean,
) {
  await db
    .updateTable('notifier_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_error: message,
      response_status: responseStatus,
      status: final ? 'failed' : 'pending',
      updated_at: new Date(),
    }))
    .where('id', '=', deliveryId)
    .execute();
}

export async function markDeliveryDelivered(db: Db, deliveryId: string, responseStatus: number) {
  await db
    .updateTable('notifier_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      status: 'delivered',
      response_status: responseStatus,
      last_error: null,
      delivered_at: new Date(),
      updated_at: new Date(),
    }))
    .where('id', '=', deliveryId)
    .execute();
}

// Subjects of deliveries

export function findTenantSlug(db: Db, tenantId: string) {
  return db.selectFrom('tenants').select(['id', 'slug']).where('id', '=', tenantId).executeTakeFirstOrThrow();
}

export function findReportForDelivery(db: Db, tenantId: string, reportId: string) {
  return db
    .selectFrom('morning_reports')
    .select(['id', 'generated_at', 'period_from', 'period_to', 'headline', 'sections'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', reportId)
    .executeTakeFirst();
}

export function findFindingForDelivery(db: Db, tenantId: string, findingId: string) {
  return db
    .selectFrom('findings')
    .select(['id', 'title', 'severity', 'domain', 'check_id', 'status', 'detected_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', findingId)
    .executeTakeFirst();
}
