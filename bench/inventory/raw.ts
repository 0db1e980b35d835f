// The raw baseline: the same rows syncInventory writes for a first sync, written by the plainest fast
// means Postgres offers: COPY ... FROM STDIN (text format, through pg-copy-streams), or multi-row
// INSERT ... VALUES with bound parameters, in one transaction on one pg.Client.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  consoleUrl,
  contentHash,
  historyContent,
  monthlyCost,
  type CollectedInventory,
  type CostLine,
  type MetricPoint,
  type PriceBook,
} from '@opsi/inventory';

export type Cell = string | number | null | string[];

export interface RawTable {
  table: string;
  columns: string[];
  count: number;
  /** The rows, built lazily: JSON texts are serialized here, inside the timed write. */
  rows(): Generator<Cell[]>;
}

export interface RawTarget {
  tenantId: string;
  connectionId: string;
  snapshotId: string;
}

export interface Prepared {
  /** Per-resource values syncInventory derives in JavaScript (computed once, untimed). */
  hashes: string[];
  costs: Array<number | null>;
  urls: Array<string | null>;
  dedupeKeys: string[];
  edges: CollectedInventory['edges'];
  /** ms spent on each derivation: the hashing is the same work the sync does for its diff. */
  ms: { hash: number; costAndUrl: number; edges: number; dedupe: number };
}

/** Derives what the rows need beyond the inventory: content hashes, prices, console links, keys. */
export function prepare(inv: CollectedInventory, book: PriceBook): Prepared {
  let t = performance.now();
  const hashes = inv.resources.map((r) => contentHash(historyContent(r)));
  const hash = performance.now() - t;
  t = performance.now();
  const costs = inv.resources.map((r) => monthlyCost(r, book));
  const urls = inv.resources.map((r) => consoleUrl(r));
  const costAndUrl = performance.now() - t;
  t = performance.now();
  const arns = new Set(inv.resources.map((r) => r.arn));
  const keys = new Set<string>();
  const edges = inv.edges.filter((e) => {
    const key = `${e.from}|${e.to}|${e.kind}`;
    if (keys.has(key) || !arns.has(e.from) || !arns.has(e.to)) return false;
    keys.add(key);
    return true;
  });
  const edgeMs = performance.now() - t;
  t = performance.now();
  const dedupeKeys = inv.events.map((e) => contentHash([e.kind, e.at, e.name, e.arns, e.fingerprint]));
  return {
    hashes,
    costs,
    urls,
    dedupeKeys,
    edges,
    ms: { hash, costAndUrl, edges: edgeMs, dedupe: performance.now() - t },
  };
}

/**
 * Rows in ARN order, stably: the order syncInventory writes metrics and cost lines in (it sorts them so
 * that inserts walk the ARN-led primary keys in order). Written here independently of the product.
 */
export function arnOrder<T extends { arn: string }>(rows: Iterable<T>): T[] {
  return [...rows]
    .map((row, i) => ({ row, i }))
    .sort((a, b) => (a.row.arn < b.row.arn ? -1 : a.row.arn > b.row.arn ? 1 : a.i - b.i))
    .map((x) => x.row);
}

export type RowOrder = 'input' | 'arn';

export interface Ordered {
  metrics: MetricPoint[];
  costs: CostLine[];
}

/** Metrics and cost lines in the connector's order, or in ARN order (as the sync writes them). */
export function ordered(inv: CollectedInventory, order: RowOrder): Ordered {
  return order === 'arn'
    ? { metrics: arnOrder(inv.metrics), costs: arnOrder(inv.costs) }
    : { metrics: [...inv.metrics], costs: [...inv.costs] };
}

/** The six tables' rows, column for column as syncInventory writes them into an empty tenant. */
export function rawTables(
  inv: CollectedInventory,
  p: Prepared,
  target: RawTarget,
  rows: Ordered,
): RawTable[] {
  const { tenantId, connectionId, snapshotId } = target;
  const { metrics, costs } = rows;
  const at = inv.observedAt.toISOString();
  const res = inv.resources;
  return [
    {
      table: 'resources',
      columns: [
        'tenant_id',
        'connection_id',
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
        'monthly_cost',
        'console_url',
        'content_hash',
        'first_seen',
        'last_seen',
        'snapshot_id',
        'deleted_at',
      ],
      count: res.length,
      *rows() {
        for (let i = 0; i < res.length; i++) {
          const r = res[i]!;
          yield [
            tenantId,
            connectionId,
            r.arn,
            r.type,
            r.nativeId,
            r.accountId,
            r.region,
            r.availabilityZone,
            r.name,
            JSON.stringify(r.tags),
            JSON.stringify(r.attributes),
            r.sizeValue,
            r.sizeUnit,
            p.costs[i]!,
            p.urls[i]!,
            p.hashes[i]!,
            at,
            at,
            snapshotId,
            null,
          ];
        }
      },
    },
    {
      table: 'resource_history',
      columns: [
        'tenant_id',
        'arn',
        'type',
        'snapshot_id',
        'observed_at',
        'change',
        'changed_fields',
        'before',
        'after',
      ],
      count: res.length,
      *rows() {
        for (const r of res)
          yield [
            tenantId,
            r.arn,
            r.type,
            snapshotId,
            at,
            'created',
            [],
            null,
            JSON.stringify(historyContent(r)),
          ];
      },
    },
    {
      table: 'resource_edges',
      columns: [
        'tenant_id',
        'from_arn',
        'to_arn',
        'kind',
        'source',
        'confidence',
        'first_seen',
        'last_seen',
        'snapshot_id',
      ],
      count: p.edges.length,
      *rows() {
        for (const e of p.edges)
          yield [tenantId, e.from, e.to, e.kind, e.source, e.confidence, at, at, snapshotId];
      },
    },
    {
      table: 'metrics_daily',
      columns: ['tenant_id', 'arn', 'metric', 'day', 'avg', 'max', 'sum'],
      count: metrics.length,
      *rows() {
        for (const m of metrics) yield [tenantId, m.arn, m.metric, m.day, m.avg, m.max, m.sum];
      },
    },
    {
      table: 'cost_daily',
      columns: ['tenant_id', 'arn', 'day', 'product_code', 'usage_type', 'unblended_cost'],
      count: costs.length,
      *rows() {
        for (const c of costs) yield [tenantId, c.arn, c.day, c.productCode, c.usageType, c.unblendedCost];
      },
    },
    {
      table: 'inventory_events',
      columns: [
        'tenant_id',
        'kind',
        'at',
        'name',
        'actor',
        'source_ip',
        'fingerprint',
        'severity',
        'service',
        'arns',
        'payload',
        'dedupe_key',
      ],
      count: inv.events.length,
      *rows() {
        for (let i = 0; i < inv.events.length; i++) {
          const e = inv.events[i]!;
          yield [
            tenantId,
            e.kind,
            e.at,
            e.name,
            e.actor,
            e.sourceIp,
            e.fingerprint,
            e.severity,
            e.service,
            e.arns,
            JSON.stringify(e.payload),
            p.dedupeKeys[i]!,
          ];
        }
      },
    },
  ];
}

// ---- COPY, text format ----

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escapeText = (s: string) => (/[\\\t\n\r]/.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : s);
const arrayLiteral = (a: string[]) => `{${a.map((e) => `"${e.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;

function copyCell(v: Cell): string {
  if (v === null) return '\\N';
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return escapeText(arrayLiteral(v));
  return escapeText(v);
}

function* copyChunks(t: RawTable): Generator<string> {
  let buf = '';
  for (const row of t.rows()) {
    buf += `${row.map(copyCell).join('\t')}\n`;
    if (buf.length >= 256 * 1024) {
      yield buf;
      buf = '';
    }
  }
  if (buf) yield buf;
}

/** COPY each table FROM STDIN (text format), streamed with backpressure; answers ms per table. */
export async function copyTables(client: pg.Client, tables: RawTable[]): Promise<Record<string, number>> {
  const ms: Record<string, number> = {};
  for (const t of tables) {
    const start = performance.now();
    const stream = client.query(copyFrom(`copy ${t.table} (${t.columns.join(', ')}) from stdin`));
    await pipeline(Readable.from(copyChunks(t)), stream);
    if (stream.rowCount !== t.count)
      throw new Error(`COPY ${t.table}: ${stream.rowCount} rows, expected ${t.count}`);
    ms[t.table] = performance.now() - start;
  }
  return ms;
}

// ---- multi-row INSERT ... VALUES ----

function insertText(t: RawTable, rows: number): string {
  const n = t.columns.length;
  const values: string[] = [];
  for (let r = 0; r < rows; r++) {
    const ps: string[] = [];
    for (let c = 1; c <= n; c++) ps.push(`$${r * n + c}`);
    values.push(`(${ps.join(',')})`);
  }
  return `insert into ${t.table} (${t.columns.join(', ')}) values ${values.join(',')}`;
}

/**
 * Multi-row INSERT ... VALUES, `rowsPerStatement` rows (fewer when the 65,535-parameter limit binds)
 * per statement, parameters bound; answers ms per table and the rows per statement used.
 */
export async function insertTables(
  client: pg.Client,
  tables: RawTable[],
  rowsPerStatement: number,
): Promise<{ ms: Record<string, number>; batch: Record<string, number> }> {
  const ms: Record<string, number> = {};
  const batch: Record<string, number> = {};
  for (const t of tables) {
    const start = performance.now();
    const per = Math.min(rowsPerStatement, Math.floor(65_535 / t.columns.length));
    batch[t.table] = per;
    const full = insertText(t, per);
    let params: Cell[] = [];
    let rows = 0;
    let written = 0;
    for (const row of t.rows()) {
      for (const cell of row) params.push(cell);
      if (++rows === per) {
        written += (await client.query(full, params)).rowCount ?? 0;
        params = [];
        rows = 0;
      }
    }
    if (rows) written += (await client.query(insertText(t, rows), params)).rowCount ?? 0;
    if (written !== t.count) throw new Error(`INSERT ${t.table}: ${written} rows, expected ${t.count}`);
    ms[t.table] = performance.now() - start;
  }
  return { ms, batch };
}
