import type { CollectedInventory, InventoryEdge, InventoryResource } from '../model';
import { COMPUTE_MAPPERS } from './map-compute';
import { DATA_MAPPERS } from './map-data';
import { IAM_MAPPERS } from './map-iam';
import { LOAD_BALANCING_MAPPERS } from './map-load-balancing';
import { MONITORING_MAPPERS } from './map-monitoring';
import { NETWORK_MAPPERS } from './map-network';
import { MERGES } from './merges';
import { isDraft, Registry, type Draft, type Target, type TfRow } from './registry';
import { SECURITY_GROUP_MAPPERS } from './security-groups';
import { normalizeState, type StateFormat } from './raw-state';
import { validateTerraformState, type TerraformStateModule, type TerraformStateResource } from './schema';
import { isRecord, mostFrequent, parseArn, regionOfZone, str, stringsIn } from './values';

export interface ParseTerraformStateOptions {
  /** The AWS account, when the state does not say (it does through ARNs or aws_caller_identity). */
  accountId?: string;
  /** The region for resources whose values, references and provider do not give one. */
  defaultRegion?: string;
  /** The clock, when the state carries no timestamp of its own. */
  now?: () => Date;
}

/**
 * `deposed`: the old object of a create-before-destroy replacement whose destroy has not happened yet;
 * the current object at the same address is the one the inventory keeps.
 */
export type SkipReason = 'unsupported_type' | 'parent_not_in_state' | 'duplicate' | 'deposed';

/** A managed resource of the state that is not in the inventory, and why. */
export interface SkippedTerraformResource {
  address: string;
  type: string;
  reason: SkipReason;
}

/** The inventory, plus what the import left out so the caller can report it. */
export interface TerraformStateImport extends CollectedInventory {
  terraformVersion: string | null;
  /** Raw state (version 3 or 4) or `terraform show -json` output. */
  format: StateFormat;
  formatVersion: string;
  /** The raw state's serial and lineage (show -json output has neither). */
  serial: number | null;
  lineage: string | null;
  /** Managed instances of the state (data sources and deposed objects not counted). */
  managedCount: number;
  /** Tainted objects: kept (they exist until replaced), with `terraform_tainted: true`. */
  taintedCount: number;
  skipped: SkippedTerraformResource[];
}

const MAPPERS = {
  ...NETWORK_MAPPERS,
  ...SECURITY_GROUP_MAPPERS,
  ...COMPUTE_MAPPERS,
  ...LOAD_BALANCING_MAPPERS,
  ...DATA_MAPPERS,
  ...IAM_MAPPERS,
  ...MONITORING_MAPPERS,
};

/** Terraform types the connector turns into resources of their own. */
export const MAPPED_TERRAFORM_TYPES: readonly string[] = Object.keys(MAPPERS).sort();

/** Terraform types the connector turns into resources or merges into one. */
export const SUPPORTED_TERRAFORM_TYPES: readonly string[] = [
  ...Object.keys(MAPPERS),
  ...Object.keys(MERGES),
].sort();

const INSTANCE_KEY = /\[(?:"(?:[^"\\]|\\.)*"|\d+)\]/g;
const withoutKeys = (address: string) => address.replace(INSTANCE_KEY, '');

function flatten(
  mod: TerraformStateModule | undefined,
  managed: TfRow[],
  data: TerraformStateResource[],
  deposed: TerraformStateResource[],
): void {
  if (!mod) return;
  const modulePath = withoutKeys(mod.address ?? '');
  for (const r of mod.resources ?? []) {
    if (r.mode === 'data') {
      data.push(r);
      continue;
    }
    // A deposed object is the old half of a create-before-destroy replacement: the current one counts.
    if (r.deposed_key) {
      deposed.push(r);
      continue;
    }
    managed.push({
      address: r.address,
      configAddress: `${modulePath ? `${modulePath}.` : ''}${r.type}.${r.name}`,
      modulePath,
      type: r.type,
      values: r.values ?? {},
      dependsOn: r.depends_on ?? [],
      tainted: r.tainted === true,
    });
  }
  for (const child of mod.child_modules ?? []) flatten(child, managed, data, deposed);
}

interface Placement {
  partition: string;
  account: string;
  providerRegion: string | null;
  stateRegion: string | null;
}

/** Where the state as a whole lives: the account and partition of its ARNs, its provider's region. */
function placementOf(
  doc: { configuration?: unknown },
  rows: TfRow[],
  data: TerraformStateResource[],
  options: ParseTerraformStateOptions,
): Placement {
  const arns = [...rows.map((r) => r.values), ...data.map((d) => d.values)]
    .flatMap((v) => [...stringsIn(v)])
    .map(parseArn)
    .filter((a) => a !== null);
  const caller = data.find((d) => d.type === 'aws_caller_identity')?.values;
  const regionData = data.find((d) => d.type === 'aws_region')?.values;
  const config = isRecord(doc.configuration) ? doc.configuration.provider_config : null;
  const aws = isRecord(config) ? config.aws : null;
  const regionExpr = isRecord(aws) && isRecord(aws.expressions) ? aws.expressions.region : null;
  return {
    partition: mostFrequent(arns.map((a) => a.partition)) ?? 'aws',
    account:
      options.accountId ??
      str(caller?.account_id) ??
      mostFrequent(arns.map((a) => a.account).filter((a) => /^\d{12}$/.test(a))) ??
      mostFrequent(
        rows.map((r) => str(r.values.owner_id)).filter((o): o is string => !!o && /^\d{12}$/.test(o)),
      ) ??
      '000000000000',
    providerRegion:
      str(regionData?.region) ??
      str(regionData?.name) ??
      (isRecord(regionExpr) ? str(regionExpr.constant_value) : null),
    stateRegion: mostFrequent(arns.map((a) => a.region).filter((r) => r)),
  };
}

function resolve(reg: Registry, byArn: Map<string, Draft>, t: Draft | Target): Draft | undefined {
  if (isDraft(t)) return t;
  if ('arn' in t) return byArn.get(t.arn) ?? byArn.get(t.arn.replace(/:\*$/, ''));
  return reg.get(t.type, t.id);
}

/** Gives every draft a region and AZ: its own, else a referenced resource's, else the provider's. */
function place(reg: Registry, p: Placement, options: ParseTerraformStateOptions): void {
  const byStated = new Map(reg.drafts.filter((d) => d.arn).map((d) => [d.arn!, d]));
  // References chain (an EIP takes its instance's region, a NAT gateway its subnet's zone): a few passes settle them.
  for (let pass = 0; pass < 3; pass++) {
    for (const d of reg.drafts) {
      for (const { target, zone } of d.placeFrom) {
        const t = resolve(reg, byStated, target);
        if (!t || t === d) continue;
        if (zone && !d.availabilityZone && t.availabilityZone) d.availabilityZone = t.availabilityZone;
        if (!d.region && t.region && t.region !== 'global') d.region = t.region;
      }
      d.region ??= regionOfZone(d.availabilityZone);
    }
  }
  const fallback = p.providerRegion ?? options.defaultRegion ?? p.stateRegion ?? 'us-east-1';
  for (const d of reg.drafts) {
    d.region ??= fallback;
    d.arn ??= d.buildArn({ partition: p.partition, region: d.region, account: p.account });
  }
}

/**
 * Imports a Terraform state as an inventory: a raw `terraform.tfstate` (version 3 or 4) or the output
 * of `terraform show -json` (any format). Sensitive values are redacted before any mapper sees them.
 */
export function parseTerraformState(
  json: unknown,
  options: ParseTerraformStateOptions = {},
): TerraformStateImport {
  const doc = normalizeState(validateTerraformState(json));
  const rows: TfRow[] = [];
  const data: TerraformStateResource[] = [];
  const deposed: TerraformStateResource[] = [];
  flatten(doc.root, rows, data, deposed);

  const reg = new Registry();
  const skipped: SkippedTerraformResource[] = deposed.map((r) => ({
    address: `${r.address} (deposed ${r.deposed_key})`,
    type: r.type,
    reason: 'deposed',
  }));
  for (const row of rows) {
    const map = MAPPERS[row.type];
    if (map) map(row, reg);
    else if (!MERGES[row.type])
      skipped.push({ address: row.address, type: row.type, reason: 'unsupported_type' });
  }
  for (const row of rows) {
    const merge = MERGES[row.type];
    if (merge && !merge(row, reg)) {
      skipped.push({ address: row.address, type: row.type, reason: 'parent_not_in_state' });
    }
  }

  const placement = placementOf(doc, rows, data, options);
  place(reg, placement, options);

  // One resource per ARN: a resource of its own wins over one derived from another's block.
  const byArn = new Map<string, Draft>();
  for (const d of [...reg.drafts].sort((a, b) => Number(a.derived) - Number(b.derived))) {
    if (!byArn.has(d.arn!)) byArn.set(d.arn!, d);
    else if (!d.derived) skipped.push({ address: d.address, type: d.row.type, reason: 'duplicate' });
  }
  const kept = reg.drafts.filter((d) => byArn.get(d.arn!) === d);
  for (const fix of reg.afterwards) fix();

  const resources: InventoryResource[] = kept.map((d) => {
    const arnAccount = parseArn(d.arn)?.account;
    return {
      type: d.type,
      arn: d.arn!,
      nativeId: d.nativeId,
      accountId: arnAccount && /^\d{12}$/.test(arnAccount) ? arnAccount : placement.account,
      region: d.global ? 'global' : d.region!,
      availabilityZone: d.availabilityZone,
      name: d.name,
      tags: d.tags,
      attributes: {
        ...d.attributes,
        tags: d.tags,
        terraform_address: d.address,
        ...(d.row.tainted && !d.derived ? { terraform_tainted: true } : {}),
      },
      sizeValue: d.sizeValue,
      sizeUnit: d.sizeUnit,
    };
  });

  return {
    observedAt: observedAtOf(doc.timestamp, options),
    resources,
    edges: edgesOf(reg, kept, byArn),
    metrics: [],
    costs: [],
    events: [],
    terraformVersion: doc.terraformVersion,
    format: doc.format,
    formatVersion: doc.formatVersion,
    serial: doc.serial,
    lineage: doc.lineage,
    managedCount: rows.length,
    taintedCount: rows.filter((r) => r.tainted).length,
    skipped,
  };
}

function observedAtOf(timestamp: string | undefined, options: ParseTerraformStateOptions): Date {
  const t = timestamp ? new Date(timestamp) : null;
  return t && !Number.isNaN(t.getTime()) ? t : (options.now?.() ?? new Date());
}

function edgesOf(reg: Registry, kept: Draft[], byArn: Map<string, Draft>): InventoryEdge[] {
  const edges: InventoryEdge[] = [];
  const seen = new Set<string>();
  const add = (from: Draft | undefined, kind: InventoryEdge['kind'], to: Draft | undefined) => {
    const a = from && byArn.get(from.arn!);
    const b = to && byArn.get(to.arn!);
    if (!a || !b || a === b) return;
    const key = `${a.arn}|${kind}|${b.arn}`;
    if (seen.has(key)) return;
    seen.add(key);
    edges.push({ from: a.arn!, to: b.arn!, kind, source: 'terraform', confidence: 1 });
  };

  // depends_on names configuration addresses (no instance keys): one name may stand for every instance.
  const byConfig = new Map<string, Draft[]>();
  const byAddress = new Map<string, Draft>();
  for (const d of kept) {
    if (d.derived) continue;
    byConfig.set(d.configAddress, [...(byConfig.get(d.configAddress) ?? []), d]);
    byAddress.set(d.address, d);
  }
  for (const d of kept) {
    if (d.derived) continue;
    for (const dep of d.row.dependsOn) {
      const exact = byAddress.get(dep);
      const targets = exact
        ? [exact]
        : (byConfig.get(withoutKeys(dep)) ??
          (d.row.modulePath ? byConfig.get(`${d.row.modulePath}.${withoutKeys(dep)}`) : undefined) ??
          []);
      for (const t of targets) add(d, 'depends-on', t);
    }
  }

  for (const e of reg.edges) add(resolve(reg, byArn, e.from), e.kind, resolve(reg, byArn, e.to));
  return edges;
}
