import type { Connector, InventoryEdge, InventoryResource } from '../model';
import { parseTerraformState, type SkippedTerraformResource, type TerraformStateImport } from './parse';
import { TerraformStateError } from './schema';
import { readStateSource, sourceName, type S3ClientFactory, type TerraformStateSource } from './sources';

/** What one scan read from one state, for the connection views. */
export interface TerraformStateReadResult {
  source: string;
  readAt: Date;
  format: TerraformStateImport['format'];
  formatVersion: string;
  terraformVersion: string | null;
  serial: number | null;
  lineage: string | null;
  etag: string | null;
  lastModified: Date | null;
  /** Managed instances in the state, and the resources of them the inventory holds. */
  managed: number;
  resources: number;
  tainted: number;
  /** Managed resources of types the inventory does not model, counted by type. */
  unsupportedByType: Record<string, number>;
  /** Every other resource left out, by reason (deposed objects, orphans, one already in another state). */
  skippedByReason: Record<string, number>;
}

export interface TerraformStateConnectorOptions {
  /** A file holding a state (raw terraform.tfstate or `terraform show -json` output). */
  file?: string;
  /** The same document, already read (parsed or as text). */
  json?: unknown;
  /** States read at every collect, in order; a resource in several counts once (the first state's). */
  sources?: TerraformStateSource[];
  accountId?: string;
  defaultRegion?: string;
  now?: () => Date;
  s3?: S3ClientFactory;
  /** Told once per sync about the managed resources left out (unsupported types, orphans). */
  onSkipped?: (skipped: SkippedTerraformResource[]) => void;
  /** Told once per state read, before the merged inventory is returned. */
  onStateRead?: (result: TerraformStateReadResult) => void;
}

/** Skipped resources counted by type, for a progress line or a sync report. */
export function countSkippedByType(skipped: SkippedTerraformResource[]): { type: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const s of skipped) counts.set(s.type, (counts.get(s.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => ({ type, count })).sort((a, b) => a.type.localeCompare(b.type));
}

function tally<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Merges the imports of several states: a resource (by ARN) that two states hold counts once, the
 * first state's; edges are kept once.
 */
function merge(imports: TerraformStateImport[]): {
  merged: TerraformStateImport;
  duplicates: SkippedTerraformResource[][];
} {
  const seen = new Set<string>();
  const resources: InventoryResource[] = [];
  const duplicates = imports.map((imp) => {
    const dup: SkippedTerraformResource[] = [];
    for (const r of imp.resources) {
      if (seen.has(r.arn)) {
        dup.push({ address: String(r.attributes.terraform_address), type: r.type, reason: 'duplicate' });
        continue;
      }
      seen.add(r.arn);
      resources.push(r);
    }
    return dup;
  });
  const edgeKeys = new Set<string>();
  const edges: InventoryEdge[] = [];
  for (const e of imports.flatMap((i) => i.edges)) {
    const k = `${e.from}|${e.kind}|${e.to}`;
    if (edgeKeys.has(k)) continue;
    edgeKeys.add(k);
    edges.push(e);
  }
  const first = imports[0]!;
  return {
    merged: {
      ...first,
      observedAt: new Date(Math.max(...imports.map((i) => i.observedAt.getTime()))),
      resources,
      edges,
      skipped: imports.flatMap((i, n) => [...i.skipped, ...duplicates[n]!]),
    },
    duplicates,
  };
}

/**
 * A connector that imports Terraform states; `collect` resolves to a TerraformStateImport. Every
 * source is read at each collect (S3 by GetObject), and any state that cannot be read or parsed fails
 * the whole collect: a partial inventory would mark the missing state's resources deleted.
 */
export function createTerraformStateConnector(options: TerraformStateConnectorOptions): Connector {
  const sources: TerraformStateSource[] = [
    ...(options.sources ?? []),
    ...(options.file !== undefined ? [{ kind: 'file' as const, path: options.file }] : []),
  ];
  if (!sources.length && options.json === undefined) {
    throw new TypeError('createTerraformStateConnector needs a source, a file or json');
  }
  const parseOptions = {
    accountId: options.accountId,
    defaultRegion: options.defaultRegion,
    now: options.now,
  };
  return {
    kind: 'terraform_state',
    async collect({ signal, onProgress } = {}): Promise<TerraformStateImport> {
      signal?.throwIfAborted();
      const imports: TerraformStateImport[] = [];
      const reads: Omit<TerraformStateReadResult, 'resources' | 'skippedByReason'>[] = [];
      if (options.json !== undefined) imports.push(parseTerraformState(options.json, parseOptions));
      for (const [n, source] of sources.entries()) {
        onProgress?.('read', n, sources.length);
        let read: Awaited<ReturnType<typeof readStateSource>>;
        let result: TerraformStateImport;
        try {
          read = await readStateSource(source, { signal, s3: options.s3 });
          signal?.throwIfAborted();
          try {
            result = parseTerraformState(read.text, parseOptions);
          } catch (err) {
            if (err instanceof TerraformStateError)
              throw new TerraformStateError(`${sourceName(source)}: ${err.message}`, err.problems);
            throw err;
          }
        } catch (err) {
          if (err instanceof TerraformStateError) err.source = sourceName(source);
          throw err;
        }
        const readAt = options.now?.() ?? new Date();
        imports.push(result);
        reads.push({
          source: sourceName(source),
          readAt,
          format: result.format,
          formatVersion: result.formatVersion,
          terraformVersion: result.terraformVersion,
          serial: result.serial,
          lineage: result.lineage,
          etag: read.etag,
          lastModified: read.lastModified,
          managed: result.managedCount,
          tainted: result.taintedCount,
          unsupportedByType: tally(
            result.skipped.filter((s) => s.reason === 'unsupported_type'),
            (s) => s.type,
          ),
        });
      }
      onProgress?.('read', sources.length, sources.length);
      const { merged, duplicates } = merge(imports);
      const offset = imports.length - reads.length;
      reads.forEach((r, i) => {
        const imp = imports[i + offset]!;
        const skipped = [...imp.skipped, ...duplicates[i + offset]!].filter(
          (s) => s.reason !== 'unsupported_type',
        );
        options.onStateRead?.({
          ...r,
          resources: imp.resources.length - duplicates[i + offset]!.length,
          skippedByReason: tally(skipped, (s) => s.reason),
        });
      });
      onProgress?.('resources', merged.resources.length, merged.resources.length);
      for (const { type, count } of countSkippedByType(merged.skipped)) {
        onProgress?.(`skipped ${type}`, count, null);
      }
      options.onSkipped?.(merged.skipped);
      return merged;
    },
  };
}
