import type { Db } from '@opsi/db';
import {
  createDemoConnector,
  DemoCommandError,
  PriceBook,
  syncInventory,
  tryCommand,
  type CollectProgress,
  type InventoryObservation,
  type Connector,
  type DemoSize,
  type DemoSpec,
  type SyncResult,
} from '@opsi/inventory';
import { DETECTORS, runDetectors } from '@opsi/detectors';
import type { JobProducer } from '@opsi/jobs';
import type { TerraformStateReadResult, TerraformStateSource } from '@opsi/inventory/terraform';
import { BadRequest, Conflict, NotFound } from '../errors';
import {
  readColumns,
  readTerraformStateNow,
  recordTerraformReads,
  terraformSourceOf,
  terraformSourcesOf,
  type TerraformStateInput,
} from './terraform-states';
import {
  advanceDemoDays,
  deleteTerraformStatesOfConnection,
  findActiveScan,
  findConnection,
  findConnectionForUpdate,
  findConnectionOfTenant,
  findDemoEnvironment,
  findOtherRunningScan,
  findScan,
  findScanById,
  hasSnapshot,
  insertScan,
  lockConnection,
  markScanCompleted,
  markScanFailed,
  markScanRunning,
  updateDemoCommands,
  updateScanProgress,
  upsertConnection,
  upsertDemoEnvironment,
  upsertTerraformState,
} from './repository';

export type ConnectInput =
  | { kind: 'demo'; seed?: number; size?: DemoSize; epoch?: string }
  | ({ kind: 'terraform_state' } & TerraformStateInput)
  | { kind: 'aws'; profile: string; regions: string[] };

const today = () => new Date().toISOString().slice(0, 10);

/**
 * Connects a tenant's environment (one per tenant; connecting another kind replaces it). A demo
 * environment starts on day 0 at today's date with no commands. A Terraform state is read and checked
 * now, then again at every scan (a file from the scanning process's disk, S3 by GetObject); connecting
 * another state adds it to the tenant's states (the same source again refreshes it).
 */
export async function connectEnvironment(db: Db, tenantId: string, input: ConnectInput) {
  let config: Record<string, unknown>;
  let state: { source: TerraformStateSource; read: TerraformStateReadResult } | null = null;
  if (input.kind === 'demo') {
    const seed = input.seed ?? 42;
    if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 31 - 1)
      throw new BadRequest('--seed must be a whole number from 0 to 2147483647');
    config = { seed, size: input.size ?? 'small' };
  } else if (input.kind === 'terraform_state') {
    const source = await terraformSourceOf(input);
    state = { source, read: await readTerraformStateNow(source) };
    config = {};
  } else {
    if (!input.regions.length) throw new BadRequest('--regions needs at least one region');
    config = { profile: input.profile, regions: input.regions };
  }
  return db.transaction().execute(async (tx) => {
    const previous = await findConnectionForUpdate(tx, tenantId);
    const connection = await upsertConnection(tx, tenantId, input.kind, JSON.stringify(config));
    // Another kind replaces the connection, and with it the states it read.
    if (previous && (previous.kind !== 'terraform_state' || input.kind !== 'terraform_state'))
      await deleteTerraformStatesOfConnection(tx, previous.id);
    if (state) {
      const { sourceName } = await import('@opsi/inventory/terraform');
      const values = {
        tenant_id: tenantId,
        connection_id: connection.id,
        source: sourceName(state.source),
        config: JSON.stringify(state.source),
        ...readColumns(state.read),
      };
      await upsertTerraformState(tx, values, {
        connection_id: values.connection_id,
        config: values.config,
        ...readColumns(state.read),
      });
    }
    if (input.kind === 'demo') {
      const values = {
        tenant_id: tenantId,
        seed: Number(config.seed),
        size: config.size as DemoSize,
        epoch: input.epoch ?? today(),
        day: 0,
        commands: '[]',
      };
      await upsertDemoEnvironment(tx, values);
    }
    return connection;
  });
}

export async function demoSpec(db: Db, tenantId: string, forUpdate = false): Promise<DemoSpec> {
  const env = await findDemoEnvironment(db, tenantId, forUpdate);
  if (!env) throw new NotFound('This tenant has no demo environment: run env connect --demo first.');
  return {
    seed: env.seed,
    size: env.size,
    epoch: String(env.epoch).slice(0, 10),
    day: env.day,
    commands: env.commands,
  };
}

/**
 * Applies a mutating AWS CLI command to the tenant's demo environment, as a user fixing something
 * would. The command is checked against the environment as it is now; an unsupported, malformed or
 * refused command changes nothing.
 */
export async function execDemoCommand(db: Db, tenantId: string, command: string) {
  return db.transaction().execute(async (tx) => {
    const spec = await demoSpec(tx, tenantId, true);
    let applied;
    try {
      applied = tryCommand(spec, command);
    } catch (e) {
      if (e instanceof DemoCommandError) throw new BadRequest(`An error occurred (${e.code}): ${e.message}`);
      throw e;
    }
    await updateDemoCommands(tx, tenantId, JSON.stringify([...spec.commands, { day: spec.day, command }]));
    return { ...applied, day: spec.day };
  });
}

/** Moves the tenant's demo environment forward in simulated time (its churn and drift happen). */
export async function advanceDemo(db: Db, tenantId: string, days: number) {
  if (!Number.isInteger(days) || days < 1 || days > 365)
    throw new BadRequest('--days must be a whole number from 1 to 365');
  const env = await advanceDemoDays(db, tenantId, days);
  if (!env) throw new NotFound('This tenant has no demo environment: run env connect --demo first.');
  const epoch = String(env.epoch).slice(0, 10);
  return {
    ...env,
    epoch,
    now: new Date(Date.parse(`${epoch}T00:00:00Z`) + env.day * 86_400_000).toISOString(),
  };
}

/** A running scan older than this no longer counts as running (runScan lets another start then). */
const RUNNING_SCAN_STALE_MS = 3_600_000;

/**
 * Records a scan and enqueues it; the job id is the scan id, so asking twice never scans twice. With
 * `reuseActive`, a scan of the tenant that is still queued or running is answered instead of a new one
 * (and enqueued again under its own job id, a no-op while its job exists), so an operator who asks
 * again, or whose command was interrupted, never piles up scans. `reused` says which happened.
 */
export async function requestScan(
  db: Db,
  producer: JobProducer | null,
  tenantId: string,
  requestedBy: string,
  options: { reuseActive?: boolean } = {},
) {
  const { scan, reused } = await db.transaction().execute(async (tx) => {
    // The connection's row lock makes "find an active scan, else record one" atomic per tenant.
    const connection = await findConnectionOfTenant(tx, tenantId, !!options.reuseActive);
    if (!connection) throw new Conflict('This tenant has no connected environment: run env connect first.');
    if (options.reuseActive) {
      const active = await findActiveScan(tx, tenantId, new Date(Date.now() - RUNNING_SCAN_STALE_MS));
      if (active) return { scan: active, reused: true };
    }
    const created = await insertScan(tx, tenantId, connection.id, requestedBy);
    return { scan: created, reused: false };
  });
  if (producer)
    await producer.enqueue(
      'pulse',
      'scan',
      { tenant_id: tenantId, scan_id: scan.id },
      { jobId: `scan-${scan.id}` },
    );
  return { ...scan, reused };
}

export function getScan(db: Db, tenantId: string, scanId: string) {
  return findScan(db, tenantId, scanId);
}

/** What a scan does besides syncing, and who watches it. */
export interface ScanHooks {
  /**
   * Runs the detectors over the new snapshot; all of them unless given, none when null (a
   * reinvestigation's fresh sync checks one finding itself).
   */
  detect?:
    ((db: Db, tenantId: string, sync: SyncResult, scanId: string) => Promise<Record<string, number>>) | null;
  onProgress?: (phase: string, counts: Record<string, number>) => void;
}

async function detectAll(db: Db, tenantId: string, _sync: SyncResult, scanId: string) {
  const summary = await runDetectors(db, tenantId, DETECTORS, { scanId });
  return {
    detectors: summary.detectors,
    findings: summary.findings,
    new_findings: summary.newFindings,
    rediscovered: summary.rediscovered,
    regressed: summary.regressed,
    clustered: summary.clustered,
    failed_queries: summary.failedQueries,
  };
}

export class ScanBusy extends Error {
  constructor(readonly otherScanId: string) {
    super(`another scan of this tenant is running (${otherScanId})`);
  }
}

interface ScanSource {
  connector: Connector;
  /** The connector's collect, or the demo's observe (a whale's inventory is built as it is synced). */
  collect: (options: { onProgress?: CollectProgress }) => Promise<InventoryObservation>;
  backfill: () => Iterable<InventoryObservation>;
  /** Records what the collect read (Terraform states: serial, counts, or the error), done or failed. */
  afterCollect?: (error: unknown) => Promise<void>;
}

async function connectorFor(
  db: Db,
  tenantId: string,
  connectionId: string,
  kind: string,
  config: Record<string, unknown>,
  book: PriceBook,
): Promise<ScanSource> {
  if (kind === 'demo') {
    const connector = createDemoConnector(await demoSpec(db, tenantId), book);
    return { connector, collect: (o) => connector.observe(o), backfill: () => connector.backfill() };
  }
  if (kind === 'terraform_state') {
    const { createTerraformStateConnector, TerraformStateError } = await import('@opsi/inventory/terraform');
    const sources = await terraformSourcesOf(db, connectionId);
    if (!sources.length)
      throw new Conflict(
        'This tenant has no Terraform state connected: run env connect --terraform-state or --terraform-s3.',
      );
    const reads: TerraformStateReadResult[] = [];
    const connector = createTerraformStateConnector({
      sources: sources.map((s) => s.source),
      onStateRead: (r) => reads.push(r),
    });
    return {
      connector,
      collect: (o) => connector.collect(o),
      backfill: () => [],
      afterCollect: (error) =>
        recordTerraformReads(
          db,
          connectionId,
          reads,
          error instanceof TerraformStateError && error.source
            ? { source: error.source, message: error.message }
            : null,
        ),
    };
  }
  const { createAwsConnector } = await import('@opsi/inventory/aws');
  const connector = createAwsConnector({
    profile: String(config.profile),
    regions: config.regions as string[],
  });
  return {
    connector,
    collect: (o) => connector.collect(o),
    backfill: () => [],
  };
}

/**
 * Runs one scan: sync the tenant's connection into a snapshot (the demo's first scan also records its
 * past, days -7 and -1, so drift has history), then the detectors. Idempotent per scan id: a completed
 * scan is not run again. Two scans of one tenant never run at once: the second throws ScanBusy (the
 * queue retries it later) and the sync itself holds the connection's row lock.
 */
export async function runScan(db: Db, scanId: string, hooks: ScanHooks = {}) {
  const scan = await findScanById(db, scanId);
  if (!scan) throw new NotFound(`no scan ${scanId}`);
  if (scan.status === 'completed') return scan;
  const tenantId = scan.tenant_id;
  // Check and claim under the connection's row lock, so two scans cannot both see "none running".
  await db.transaction().execute(async (tx) => {
    await lockConnection(tx, scan.connection_id);
    const other = await findOtherRunningScan(
      tx,
      tenantId,
      scanId,
      new Date(Date.now() - RUNNING_SCAN_STALE_MS),
    );
    if (other) throw new ScanBusy(other.id);
    await markScanRunning(tx, scanId);
  });
  const counts: Record<string, number> = {};
  let lastWrite = 0;
  const progress = async (phase: string, force = false) => {
    hooks.onProgress?.(phase, counts);
    if (!force && Date.now() - lastWrite < 500) return;
    lastWrite = Date.now();
    await updateScanProgress(db, scanId, phase, JSON.stringify(counts));
  };
  try {
    const connection = await findConnection(db, scan.connection_id);
    const book = await PriceBook.load(db);
    const { collect, backfill, afterCollect } = await connectorFor(
      db,
      tenantId,
      connection.id,
      connection.kind,
      connection.config,
      book,
    );
    const target = { tenantId, connectionId: connection.id, scanId };
    const firstScan = !(await hasSnapshot(db, tenantId));
    if (firstScan) {
      for (const past of backfill()) {
        await progress('recording history', true);
        await syncInventory(db, target, past, book);
      }
    }
    let inventory: InventoryObservation;
    try {
      inventory = await collect({
        onProgress: (phase) => void progress(`collecting: ${phase}`),
      });
    } catch (e) {
      await afterCollect?.(e);
      throw e;
    }
    await afterCollect?.(null);
    counts.collected = inventory.resources.length;
    if (inventory.retries !== undefined) counts.retries = inventory.retries;
    const warnings = inventory.warnings ?? [];
    await progress('syncing', true);
    const sync = await syncInventory(db, target, inventory, book, (phase, done) => {
      counts[`synced_${phase}`] = done;
      void progress('syncing');
    });
    Object.assign(counts, {
      resources: sync.resources,
      edges: sync.edges,
      created: sync.created,
      updated: sync.updated,
      deleted: sync.deleted,
      metrics: sync.metrics,
      costs: sync.costs,
      events: sync.events,
    });
    for (const key of Object.keys(counts)) if (key.startsWith('synced_')) delete counts[key];
    const detect = hooks.detect === undefined ? detectAll : hooks.detect;
    if (detect) {
      await progress('detecting', true);
      Object.assign(counts, await detect(db, tenantId, sync, scanId));
    }
    return await markScanCompleted(db, scanId, {
      counts: JSON.stringify(counts),
      // Some of the connection could not be read: what was read is synced, the rest kept as it was.
      partial: warnings.length > 0 || (inventory.unread?.length ?? 0) > 0,
      warnings: JSON.stringify(warnings),
      snapshot_id: sync.snapshotId,
    });
  } catch (e) {
    await markScanFailed(db, scanId, (e as Error).message.slice(0, 2000));
    throw e;
  }
}
