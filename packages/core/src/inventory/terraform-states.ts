import { resolve } from 'node:path';
import type { Db } from '@opsi/db';
import type {
  S3ClientFactory,
  TerraformStateReadResult,
  TerraformStateSource,
} from '@opsi/inventory/terraform';
import { BadRequest, NotFound } from '../errors';
import {
  deleteTerraformState,
  findTerraformSources,
  findTerraformStates,
  markTerraformStateFailed,
  updateTerraformStateRead,
} from './repository';

/** How `env connect` names a Terraform state: a file, or an S3 backend's `s3://bucket/key`. */
export type TerraformStateInput =
  | { file: string; s3?: undefined; region?: undefined }
  | { s3: string; region?: string | undefined; pathStyle?: boolean | undefined; file?: undefined };

/** A state of the tenant's connection as the console and the catalog show it. */
export interface TerraformStateView {
  source: string;
  kind: 'file' | 's3';
  region: string | null;
  format: string | null;
  format_version: string | null;
  terraform_version: string | null;
  serial: number | null;
  lineage: string | null;
  last_read_at: Date | null;
  last_modified: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  managed: number | null;
  resources: number | null;
  tainted: number | null;
  /** Managed resources of types the inventory does not model, by type. */
  skipped_unsupported: Record<string, number>;
  /** Other managed resources left out, by reason (deposed, duplicate, parent_not_in_state). */
  skipped_other: Record<string, number>;
}

/** Checks the input and names the source; an unusable one is a 400 that changes nothing. */
export async function terraformSourceOf(input: TerraformStateInput): Promise<TerraformStateSource> {
  if (input.file !== undefined) {
    if (!input.file.trim()) throw new BadRequest('--terraform-state needs a file');
    return { kind: 'file', path: resolve(input.file) };
  }
  const { parseS3Url, TerraformStateError } = await import('@opsi/inventory/terraform');
  try {
    const { bucket, key } = parseS3Url(input.s3);
    if (input.region !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d+$/.test(input.region))
      throw new BadRequest(`--region ${input.region} is not an AWS region (like eu-west-1)`);
    return {
      kind: 's3',
      bucket,
      key,
      region: input.region ?? null,
      ...(input.pathStyle ? { pathStyle: true } : {}),
    };
  } catch (e) {
    if (e instanceof TerraformStateError) throw new BadRequest(e.message);
    throw e;
  }
}

/**
 * Reads and parses a state now, as a scan will: what cannot be read or is not a state is refused at
 * connect time with the reason, not at the first scan.
 */
export async function readTerraformStateNow(
  source: TerraformStateSource,
  s3?: S3ClientFactory,
): Promise<TerraformStateReadResult> {
  const { createTerraformStateConnector, TerraformStateError } = await import('@opsi/inventory/terraform');
  let result: TerraformStateReadResult | undefined;
  try {
    await createTerraformStateConnector({
      sources: [source],
      ...(s3 ? { s3 } : {}),
      onStateRead: (r) => (result = r),
    }).collect({});
  } catch (e) {
    if (e instanceof TerraformStateError) throw new BadRequest(e.message);
    throw e;
  }
  return result!;
}

/** The columns a read writes on its state's row. */
export function readColumns(r: TerraformStateReadResult) {
  return {
    format: r.format,
    format_version: r.formatVersion,
    terraform_version: r.terraformVersion,
    serial: r.serial,
    lineage: r.lineage,
    etag: r.etag,
    last_modified: r.lastModified,
    last_read_at: r.readAt,
    last_error: null,
    last_error_at: null,
    managed_count: r.managed,
    resource_count: r.resources,
    tainted_count: r.tainted,
    unsupported_by_type: JSON.stringify(r.unsupportedByType),
    skipped_by_reason: JSON.stringify(r.skippedByReason),
    updated_at: new Date(),
  };
}

/** The connection's states in the order they were connected (the first holds a shared resource). */
export async function listTerraformStates(db: Db, tenantId: string): Promise<TerraformStateView[]> {
  const rows = await findTerraformStates(db, tenantId);
  return rows.map((r) => ({
    source: r.source,
    kind: r.config.kind === 's3' ? 's3' : 'file',
    region: typeof r.config.region === 'string' ? r.config.region : null,
    format: r.format,
    format_version: r.format_version,
    terraform_version: r.terraform_version,
    serial: r.serial,
    lineage: r.lineage,
    last_read_at: r.last_read_at,
    last_modified: r.last_modified,
    last_error: r.last_error,
    last_error_at: r.last_error_at,
    managed: r.managed_count,
    resources: r.resource_count,
    tainted: r.tainted_count,
    skipped_unsupported: r.unsupported_by_type,
    skipped_other: r.skipped_by_reason,
  }));
}

/** The sources a scan reads, in connection order. */
export async function terraformSourcesOf(db: Db, connectionId: string) {
  const rows = await findTerraformSources(db, connectionId);
  return rows.map((r) => ({ id: r.id, name: r.source, source: r.config as unknown as TerraformStateSource }));
}

/**
 * Records what a scan's reads found: each state read gets its serial, counts and read time; the state
 * whose read failed gets the error (the others keep their last good read).
 */
export async function recordTerraformReads(
  db: Db,
  connectionId: string,
  reads: TerraformStateReadResult[],
  failure: { source: string; message: string } | null,
) {
  for (const r of reads) {
    await updateTerraformStateRead(db, connectionId, r.source, readColumns(r));
  }
  if (failure)
    await markTerraformStateFailed(db, connectionId, failure.source, failure.message.slice(0, 2000));
}

/**
 * Forgets one state of the tenant's connection (named as `env connect` named it: a file path or
 * `s3://bucket/key`). Its resources are marked deleted by the next scan, as anything no longer seen.
 */
export async function removeTerraformState(db: Db, tenantId: string, input: TerraformStateInput) {
  const { sourceName } = await import('@opsi/inventory/terraform');
  const source = sourceName(await terraformSourceOf(input));
  const removed = await deleteTerraformState(db, tenantId, source);
  if (!removed) throw new NotFound(`This tenant has no Terraform state ${source}.`);
  return { removed: removed.source, states: await listTerraformStates(db, tenantId) };
}
