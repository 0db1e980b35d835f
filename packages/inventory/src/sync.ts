import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { sql, type Db } from '@opsi/db';
import { consoleUrl } from './console-links';
import type { CollectedInventory, InventoryResource } from './model';
import { monthlyCost, type PriceBook } from './pricing';

export interface SyncTarget {
  tenantId: string;
  connectionId: string;
  scanId: string | null;
}

export interface SyncResult {
  snapshotId: string;
  observedAt: Date;
  resources: number;
  edges: number;
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  metrics: number;
  costs: number;
  events: number;
}

export type SyncProgress = (phase: string, done: number, total: number) => void;

const BATCH = 2000;

/** What a history entry records of a resource: everything but bookkeeping. */
export function historyContent(r: InventoryResource) {
  return {
    type: r.type,
    native_id: r.nativeId,
    account_id: r.accountId,
    region: r.region,
    availability_zone: r.availabilityZone,
    name: r.name,
    tags: r.tags,
    attributes: r.attributes,
    size_value: r.sizeValue,
    size_unit: r.sizeUnit,
  };
}

/** The content hash the sync stores: sha1 of the value's canonical JSON (RFC 8785). */
export function contentHash(value: unknown): string {
  return createHash('sha1')
    .update(canonicalize(value) ?? '')
    .digest('hex');
}

/** Top-level fields (attributes.* and tags.* spelled out) whose values differ. */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[key];
    const a = after[key];
    if (
      (key === 'attributes' || key === 'tags') &&
      b &&
      a &&
      typeof b === 'object' &&
      typeof a === 'object'
    ) {
      for (const inner of changedFields(b as Record<string, unknown>, a as Record<string, unknown>))
        out.push(`${key}.${inner}`);
    } else if (canonicalize(b ?? null) !== canonicalize(a ?? null)) out.push(key);
  }
  return out.sort();
}

function* chunks<T>(items: T[], size = BATCH): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/**
 * The rows in ARN order, stably (of rows with the same key the first still wins `on conflict do
 * nothing`). The primary keys of metrics_daily and cost_daily lead with the ARN, so the inserts walk the
 * index in order instead of jumping to a random leaf for every resource: measured 15-30 % faster once
 * those indexes outgrow shared buffers (bench/inventory). Connectors list a resource's rows together, so
 * this sorts runs of one ARN rather than rows; the caller's array is left as it is.
 */
function byArn<T extends { arn: string }>(rows: T[]): T[] {
  const runs: Array<{ arn: string; start: number; end: number }> = [];
  for (let start = 0; start < rows.length;) {
    const arn = rows[start]!.arn;
    let end = start + 1;
    while (end < rows.length && rows[end]!.arn === arn) end++;
    runs.push({ arn, start, end });
    start = end;
  }
  runs.sort((a, b) => (a.arn < b.arn ? -1 : a.arn > b.arn ? 1 : 0)); // Array.prototype.sort is stable
  const out: T[] = [];
  for (const { start, end } of runs) for (let i = start; i < end; i++) out.push(rows[i]!);
  return out;
}

/**
 * Writes one observation of a connection as a snapshot, in a single transaction: resources are upserted
 * (unchanged ones only get last_seen), history records what was created, updated or deleted with before
 * and after, edges are replaced, and metrics, cost lines and events are added. If anything fails, the
 * whole snapshot rolls back and the previous inventory stays the current one.
 *
 * Bulk statements pass column arrays to unnest(): one round trip per 2,000 rows, and Postgres does the
 * row building (a measured multiple of multi-row VALUES with per-row parameters). JSON-valued columns
 * (tags, attributes, history's before and after) travel as one JSON document per batch, read back with
 * jsonb_to_recordset beside the unnest()ed columns: as elements of a text[] parameter each JSON text was
 * escaped again by the driver (and unescaped by Postgres), which cost more client CPU than the rest of the
 * sync's JavaScript together (bench/inventory). The stored values are the same jsonb either way.
 */
export async function syncInventory(
  db: Db,
  target: SyncTarget,
  inventory: CollectedInventory,
  book: PriceBook,
  onProgress?: SyncProgress,
): Promise<SyncResult> {
  const { tenantId } = target;
  const observedAt = inventory.observedAt;
  return db.transaction().execute(async (tx) => {
    // One sync per tenant at a time: a second one waits here for the first to commit or roll back.
    await sql`select 1 from cloud_connections where id = ${target.connectionId} and tenant_id = ${tenantId} for update`.execute(
      tx,
    );
    const snapshot = await tx
      .insertInto('inventory_snapshots')
      .values({
        tenant_id: tenantId,
        connection_id: target.connectionId,
        scan_id: target.scanId,
        observed_at: observedAt,
        resource_count: inventory.resources.length,
        edge_count: inventory.edges.length,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const snapshotId = snapshot.id;

    // ---- what is there now ----
    const existing = new Map<string, { hash: string; deleted: boolean }>();
    const rows = await tx
      .selectFrom('resources')
      .select(['arn', 'content_hash', 'deleted_at'])
      .where('tenant_id', '=', tenantId)
      .execute();
    for (const row of rows)
      existing.set(row.arn, { hash: row.content_hash, deleted: row.deleted_at !== null });

    const seen = new Set<string>();
    const changed: Array<{ r: InventoryResource; hash: string; change: 'created' | 'updated' }> = [];
    const unchanged: string[] = [];
    for (const r of inventory.resources) {
      if (seen.has(r.arn)) continue; // a connector listing a resource twice keeps the first
      seen.add(r.arn);
      const hash = contentHash(historyContent(r));
      const before = existing.get(r.arn);
      if (!before || before.deleted) changed.push({ r, hash, change: 'created' });
      else if (before.hash !== hash) changed.push({ r, hash, change: 'updated' });
      else unchanged.push(r.arn);
    }
    const gone = [...existing].filter(([arn, e]) => !e.deleted && !seen.has(arn)).map(([arn]) => arn);

    // ---- history needs the previous content of what changed or went ----
    const previous = new Map<string, Record<string, unknown>>();
    const needBefore = [...changed.filter((c) => c.change === 'updated').map((c) => c.r.arn), ...gone];
    for (const batch of chunks(needBefore)) {
      const before = await tx
        .selectFrom('resources')
        .select([
          'arn',
          'type',
          'native_id',
          'account_id',
          'region',
          'availability_zone',
          'name',
          'tags',
          'attributes',
          'size_value',
          'size_unit',
        ])
        .where('tenant_id', '=', tenantId)
        .where('arn', 'in', batch)
        .execute();
      for (const { arn, ...rest } of before) previous.set(arn, rest);
    }

    // ---- resources ----
    let written = 0;
    const total = changed.length + unchanged.length + gone.length;
    for (const batch of chunks(changed)) {
      const cols = {
        arn: [] as string[],
        type: [] as string[],
        native_id: [] as string[],
        account_id: [] as string[],
        region: [] as string[],
        az: [] as Array<string | null>,
        name: [] as Array<string | null>,
        json: [] as Array<Pick<InventoryResource, 'tags' | 'attributes'>>,
        size_value: [] as Array<number | null>,
        size_unit: [] as Array<string | null>,
        monthly_cost: [] as Array<number | null>,
        console_url: [] as Array<string | null>,
        hash: [] as string[],
      };
      for (const { r, hash } of batch) {
        cols.arn.push(r.arn);
        cols.type.push(r.type);
        cols.native_id.push(r.nativeId);
        cols.account_id.push(r.accountId);
        cols.region.push(r.region);
        cols.az.push(r.availabilityZone);
        cols.name.push(r.name);
        cols.json.push({ tags: r.tags, attributes: r.attributes });
        cols.size_value.push(r.sizeValue);
        cols.size_unit.push(r.sizeUnit);
        cols.monthly_cost.push(monthlyCost(r, book));
        cols.console_url.push(consoleUrl(r));
        cols.hash.push(hash);
      }
      await sql`
        insert into resources (tenant_id, connection_id, arn, type, native_id, account_id, region, availability_zone, name,
          tags, attributes, size_value, size_unit, monthly_cost, console_url, content_hash, first_seen, last_seen, snapshot_id, deleted_at)
        select ${tenantId}::uuid, ${target.connectionId}::uuid, u.arn, u.type, u.native_id, u.account_id, u.region, u.az, u.name,
          u.tags, u.attributes, u.size_value, u.size_unit, u.monthly_cost, u.console_url, u.hash,
          ${observedAt}::timestamptz, ${observedAt}::timestamptz, ${snapshotId}::uuid, null
        from rows from (unnest(${cols.arn}::text[]), unnest(${cols.type}::text[]), unnest(${cols.native_id}::text[]),
          unnest(${cols.account_id}::text[]), unnest(${cols.region}::text[]), unnest(${cols.az}::text[]), unnest(${cols.name}::text[]),
          jsonb_to_recordset(${JSON.stringify(cols.json)}::jsonb) as (tags jsonb, attributes jsonb),
          unnest(${cols.size_value}::numeric[]), unnest(${cols.size_unit}::text[]), unnest(${cols.monthly_cost}::numeric[]),
          unnest(${cols.console_url}::text[]), unnest(${cols.hash}::text[]))
          as u(arn, type, native_id, account_id, region, az, name, tags, attributes, size_value, size_unit, monthly_cost, console_url, hash)
        on conflict (tenant_id, arn) do update set
          connection_id = excluded.connection_id, type = excluded.type, native_id = excluded.native_id, account_id = excluded.account_id,
          region = excluded.region, availability_zone = excluded.availability_zone, name = excluded.name, tags = excluded.tags,
          attributes = excluded.attributes, size_value = excluded.size_value, size_unit = excluded.size_unit,
          monthly_cost = excluded.monthly_cost, console_url = excluded.console_url, content_hash = excluded.content_hash,
          first_seen = case when resources.deleted_at is null then resources.first_seen else excluded.first_seen end,
          last_seen = excluded.last_seen, snapshot_id = excluded.snapshot_id, deleted_at = null`.execute(tx);
      written += batch.length;
      onProgress?.('resources', written, total);
    }
    for (const batch of chunks(unchanged, 10_000)) {
      await sql`update resources set last_seen = ${observedAt}::timestamptz, snapshot_id = ${snapshotId}::uuid
        where tenant_id = ${tenantId}::uuid and arn = any(${batch}::text[])`.execute(tx);
      written += batch.length;
      onProgress?.('resources', written, total);
    }
    for (const batch of chunks(gone, 10_000)) {
      await sql`update resources set deleted_at = ${observedAt}::timestamptz, snapshot_id = ${snapshotId}::uuid
        where tenant_id = ${tenantId}::uuid and arn = any(${batch}::text[])`.execute(tx);
      written += batch.length;
      onProgress?.('resources', written, total);
    }

    // ---- history ----
    const history = [
      ...changed.map(({ r, change }) => {
        const after = historyContent(r);
        const before = previous.get(r.arn) ?? null;
        return {
          arn: r.arn,
          type: r.type,
          change,
          fields: before ? changedFields(before, after) : [],
          before,
          after,
        };
      }),
      ...gone.map((arn) => {
        const before = previous.get(arn)!;
        return {
          arn,
          type: String(before.type),
          change: 'deleted' as const,
          fields: [],
          before,
          after: null,
        };
      }),
    ];
    for (const batch of chunks(history)) {
      await sql`
        insert into resource_history (tenant_id, arn, type, snapshot_id, observed_at, change, changed_fields, before, after)
        select ${tenantId}::uuid, u.arn, u.type, ${snapshotId}::uuid, ${observedAt}::timestamptz, u.change,
          coalesce((select array_agg(f) from jsonb_array_elements_text(u.fields) f), '{}'), u.before, u.after
        from rows from (unnest(${batch.map((h) => h.arn)}::text[]), unnest(${batch.map((h) => h.type)}::text[]),
          unnest(${batch.map((h) => h.change)}::text[]),
          jsonb_to_recordset(${JSON.stringify(batch.map((h) => ({ fields: h.fields, before: h.before, after: h.after })))}::jsonb)
            as (fields jsonb, before jsonb, after jsonb)) as u(arn, type, change, fields, before, after)`.execute(
        tx,
      );
    }

    // ---- edges: what this observation states replaces what the last one did ----
    const edgeKeys = new Set<string>();
    const edges = inventory.edges.filter((e) => {
      const key = `${e.from}|${e.to}|${e.kind}`;
      if (edgeKeys.has(key) || !seen.has(e.from) || !seen.has(e.to)) return false;
      edgeKeys.add(key);
      return true;
    });
    for (const batch of chunks(edges, 5000)) {
      await sql`
        insert into resource_edges (tenant_id, from_arn, to_arn, kind, source, confidence, first_seen, last_seen, snapshot_id)
        select ${tenantId}::uuid, u.f, u.t, u.k, u.s, u.c, ${observedAt}::timestamptz, ${observedAt}::timestamptz, ${snapshotId}::uuid
        from unnest(${batch.map((e) => e.from)}::text[], ${batch.map((e) => e.to)}::text[], ${batch.map((e) => e.kind)}::text[],
          ${batch.map((e) => e.source)}::text[], ${batch.map((e) => e.confidence)}::real[]) as u(f, t, k, s, c)
        on conflict (tenant_id, from_arn, to_arn, kind) do update set
          source = excluded.source, confidence = excluded.confidence, last_seen = excluded.last_seen, snapshot_id = excluded.snapshot_id`.execute(
        tx,
      );
      onProgress?.('edges', 0, edges.length);
    }
    await sql`delete from resource_edges where tenant_id = ${tenantId}::uuid and snapshot_id <> ${snapshotId}::uuid`.execute(
      tx,
    );

    // ---- metrics, cost lines, events: facts about past days, written once ----
    let metrics = 0;
    for (const batch of chunks(byArn(inventory.metrics), 10_000)) {
      const result = await sql`
        insert into metrics_daily (tenant_id, arn, metric, day, avg, max, sum)
        select ${tenantId}::uuid, u.arn, u.metric, u.day::date, u.avg, u.max, u.sum
        from unnest(${batch.map((m) => m.arn)}::text[], ${batch.map((m) => m.metric)}::text[], ${batch.map((m) => m.day)}::text[],
          ${batch.map((m) => m.avg)}::float8[], ${batch.map((m) => m.max)}::float8[], ${batch.map((m) => m.sum)}::float8[])
          as u(arn, metric, day, avg, max, sum)
        on conflict do nothing`.execute(tx);
      metrics += Number(result.numAffectedRows ?? 0);
      onProgress?.('metrics', metrics, inventory.metrics.length);
    }
    let costs = 0;
    for (const batch of chunks(byArn(inventory.costs), 10_000)) {
      const result = await sql`
        insert into cost_daily (tenant_id, arn, day, product_code, usage_type, unblended_cost)
        select ${tenantId}::uuid, u.arn, u.day::date, u.p, u.ut, u.c
        from unnest(${batch.map((c) => c.arn)}::text[], ${batch.map((c) => c.day)}::text[], ${batch.map((c) => c.productCode)}::text[],
          ${batch.map((c) => c.usageType)}::text[], ${batch.map((c) => c.unblendedCost)}::numeric[]) as u(arn, day, p, ut, c)
        on conflict do nothing`.execute(tx);
      costs += Number(result.numAffectedRows ?? 0);
      onProgress?.('costs', costs, inventory.costs.length);
    }
    let events = 0;
    for (const batch of chunks(inventory.events)) {
      const result = await sql`
        insert into inventory_events (tenant_id, kind, at, name, actor, source_ip, fingerprint, severity, service, arns, payload, dedupe_key)
        select ${tenantId}::uuid, u.kind, u.at::timestamptz, u.name, u.actor, u.ip, u.fp, u.sev, u.svc,
          coalesce((select array_agg(a) from jsonb_array_elements_text(u.arns::jsonb) a), '{}'), u.payload::jsonb, u.dk
        from unnest(${batch.map((e) => e.kind)}::text[], ${batch.map((e) => e.at)}::text[], ${batch.map((e) => e.name)}::text[],
          ${batch.map((e) => e.actor)}::text[], ${batch.map((e) => e.sourceIp)}::text[], ${batch.map((e) => e.fingerprint)}::text[],
          ${batch.map((e) => e.severity)}::text[], ${batch.map((e) => e.service)}::text[], ${batch.map((e) => JSON.stringify(e.arns))}::text[],
          ${batch.map((e) => JSON.stringify(e.payload))}::text[], ${batch.map((e) => contentHash([e.kind, e.at, e.name, e.arns, e.fingerprint]))}::text[])
          as u(kind, at, name, actor, ip, fp, sev, svc, arns, payload, dk)
        on conflict (tenant_id, dedupe_key) do nothing`.execute(tx);
      events += Number(result.numAffectedRows ?? 0);
    }

    // Fresh statistics: detectors join these tables, and without them the planner guesses one row each.
    await sql`analyze resources, resource_edges, metrics_daily`.execute(tx);

    const created = changed.filter((c) => c.change === 'created').length;
    const updated = changed.length - created;
    await tx
      .updateTable('inventory_snapshots')
      .set({
        created_count: created,
        updated_count: updated,
        deleted_count: gone.length,
        resource_count: seen.size,
        edge_count: edges.length,
      })
      .where('id', '=', snapshotId)
      .execute();
    return {
      snapshotId,
      observedAt,
      resources: seen.size,
      edges: edges.length,
      created,
      updated,
      deleted: gone.length,
      unchanged: unchanged.length,
      metrics,
      costs,
      events,
    };
  });
}
