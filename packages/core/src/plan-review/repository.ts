import { sql, type Database, type Db, type Transaction } from '@opsi/db';
import { ACTIVE_FINDING_STATUSES } from '@opsi/contracts';

type Tx = Db | Transaction<Database>;

/** The keys plan review looks live resources up by. */
export interface LiveKeys {
  addresses: string[];
  arns: string[];
  ids: string[];
  names: string[];
}

export function findLiveResourceRows(db: Tx, tenantId: string, keys: LiveKeys) {
  return db
    .selectFrom('resources')
    .select([
      'id',
      'arn',
      'type',
      'native_id',
      'name',
      'account_id',
      'region',
      'availability_zone',
      'tags',
      'attributes',
      'monthly_cost',
    ])
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        ...(keys.addresses.length
          ? [
              eb(
                sql<string>`attributes->>'terraform_address'`,
                '=',
                sql<string>`any(${keys.addresses}::text[])`,
              ),
            ]
          : []),
        ...(keys.arns.length ? [eb('arn', '=', sql<string>`any(${keys.arns}::text[])`)] : []),
        ...(keys.ids.length ? [eb('native_id', '=', sql<string>`any(${keys.ids}::text[])`)] : []),
        ...(keys.names.length ? [eb('name', '=', sql<string>`any(${keys.names}::text[])`)] : []),
      ]),
    )
    .execute();
}

export function findActiveFindingsOn(db: Tx, tenantId: string, arns: string[]) {
  return db
    .selectFrom('findings as f')
    .innerJoin('finding_resources as fr', (j) =>
      j.onRef('fr.finding_id', '=', 'f.id').on('fr.tenant_id', '=', tenantId),
    )
    .select(['f.id', 'f.check_id', 'f.title', 'f.severity', 'fr.arn'])
    .where('f.tenant_id', '=', tenantId)
    .where('f.status', 'in', ACTIVE_FINDING_STATUSES)
    .where('fr.arn', '=', sql<string>`any(${arns}::text[])`)
    .orderBy('f.severity_rank', 'desc')
    .orderBy('f.id')
    .execute();
}

export async function findInstanceSecurityGroups(db: Tx, tenantId: string, groupIds: string[]) {
  const rows = await sql<{ group_id: string }>`
    select distinct g->>'group_id' as group_id
    from resources i, jsonb_array_elements(coalesce(i.attributes->'security_groups', '[]'::jsonb)) g
    where i.tenant_id = ${tenantId} and i.type = 'aws_ec2_instance' and i.deleted_at is null
      and coalesce(i.attributes->>'instance_state', 'running') not in ('terminated', 'shutting-down')
      and g->>'group_id' = any(${groupIds}::text[])`.execute(db);
  return rows.rows;
}

export async function findSnapshotTimes(db: Tx, tenantId: string, sources: string[]) {
  const rows = await sql<{ source: string; at: string }>`
    select coalesce(attributes->>'db_instance_identifier', attributes->>'volume_id') as source,
           max(coalesce(attributes->>'snapshot_create_time', attributes->>'start_time')) as at
    from resources
    where tenant_id = ${tenantId} and deleted_at is null
      and type in ('aws_rds_db_snapshot', 'aws_ebs_snapshot')
      and coalesce(attributes->>'db_instance_identifier', attributes->>'volume_id') = any(${sources}::text[])
    group by 1`.execute(db);
  return rows.rows;
}

export async function findLastCloudTrailEvents(db: Tx, tenantId: string, arns: string[]) {
  const rows = await sql<{ arn: string; at: Date; name: string; actor: string | null }>`
    select distinct on (a.arn) a.arn, e.at, e.name, e.actor
    from inventory_events e, unnest(e.arns) as a(arn)
    where e.tenant_id = ${tenantId} and e.kind = 'cloudtrail' and e.arns && ${arns}::text[]
      and a.arn = any(${arns}::text[])
    order by a.arn, e.at desc`.execute(db);
  return rows.rows;
}
