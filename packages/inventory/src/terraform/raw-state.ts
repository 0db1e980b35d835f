import { expandFlatmap } from './flatmap';
import {
  redactPaths,
  redactSecretNames,
  sensitiveValuePaths,
  stateSensitivePaths,
  type PathStep,
} from './redact';
import type {
  RawStateV3,
  RawStateV4,
  StateInput,
  TerraformShowJson,
  TerraformStateModule,
  TerraformStateResource,
} from './schema';

/** Which of the formats a state came in. */
export type StateFormat = 'state_v3' | 'state_v4' | 'show_json';

/**
 * A state of any format as the mappers read it: `terraform show -json`'s module tree, every value
 * already redacted (so nothing downstream, stored or logged, ever holds a secret of the state).
 */
export interface NormalizedState {
  format: StateFormat;
  /** `format_version` of show -json output, else the raw state's `version`. */
  formatVersion: string;
  terraformVersion: string | null;
  serial: number | null;
  lineage: string | null;
  timestamp: string | undefined;
  configuration: unknown;
  root: TerraformStateModule;
}

function redacted(values: Record<string, unknown>, paths: PathStep[][]): Record<string, unknown> {
  return redactSecretNames(redactPaths(values, paths)) as Record<string, unknown>;
}

function redactTree(mod: TerraformStateModule | undefined): TerraformStateModule {
  if (!mod) return {};
  return {
    ...mod,
    resources: (mod.resources ?? []).map((r) => ({
      ...r,
      values: redacted(r.values ?? {}, sensitiveValuePaths(r.sensitive_values)),
    })),
    child_modules: (mod.child_modules ?? []).map(redactTree),
  };
}

/** `[0]`, `["us-east-1a"]`: how Terraform writes an instance key in an address. */
export const keySuffix = (key: string | number | null | undefined): string =>
  key === null || key === undefined ? '' : typeof key === 'number' ? `[${key}]` : `[${JSON.stringify(key)}]`;

function rootWith(byModule: Map<string, TerraformStateResource[]>): TerraformStateModule {
  // The mappers need each resource's module address, not the nesting: every module hangs off the root.
  return {
    resources: byModule.get('') ?? [],
    child_modules: [...byModule]
      .filter(([address]) => address !== '')
      .map(([address, resources]) => ({ address, resources })),
  };
}

function push(byModule: Map<string, TerraformStateResource[]>, module: string, r: TerraformStateResource) {
  const list = byModule.get(module);
  if (list) list.push(r);
  else byModule.set(module, [r]);
}

function fromV4(doc: RawStateV4): TerraformStateModule {
  const byModule = new Map<string, TerraformStateResource[]>();
  for (const res of doc.resources) {
    const module = res.module ?? '';
    const base = `${module ? `${module}.` : ''}${res.mode === 'data' ? 'data.' : ''}${res.type}.${res.name}`;
    for (const inst of res.instances) {
      const key = inst.index_key ?? undefined;
      const raw = inst.attributes ?? (inst.attributes_flat ? expandFlatmap(inst.attributes_flat) : {});
      push(byModule, module, {
        address: `${base}${keySuffix(key)}`,
        mode: res.mode,
        type: res.type,
        name: res.name,
        ...(key !== undefined ? { index: key } : {}),
        ...(res.provider ? { provider_name: res.provider } : {}),
        values: redacted(raw, stateSensitivePaths(inst.sensitive_attributes)),
        depends_on: [...(inst.dependencies ?? []), ...(inst.depends_on ?? [])],
        ...(inst.status === 'tainted' ? { tainted: true } : {}),
        ...(inst.deposed ? { deposed_key: inst.deposed } : {}),
      });
    }
  }
  return rootWith(byModule);
}

/** `aws_instance.web.1` → {mode, type, name, index}; `data.aws_ami.ubuntu` → a data source. */
function parseV3Key(key: string, type: string) {
  const parts = key.split('.');
  const mode = parts[0] === 'data' ? ('data' as const) : ('managed' as const);
  if (mode === 'data') parts.shift();
  const last = parts[parts.length - 1]!;
  const index = parts.length > 2 && /^\d+$/.test(last) ? Number(last) : undefined;
  if (index !== undefined) parts.pop();
  return { mode, type: parts[0] || type, name: parts.slice(1).join('.'), index };
}

function fromV3(doc: RawStateV3): TerraformStateModule {
  const byModule = new Map<string, TerraformStateResource[]>();
  for (const mod of doc.modules) {
    const module = mod.path
      .slice(1)
      .map((m) => `module.${m}`)
      .join('.');
    for (const [key, res] of Object.entries(mod.resources)) {
      const { mode, type, name, index } = parseV3Key(key, res.type);
      const address = `${module ? `${module}.` : ''}${mode === 'data' ? 'data.' : ''}${type}.${name}${keySuffix(index)}`;
      const objects = [
        ...(res.primary ? [{ obj: res.primary, deposed: undefined }] : []),
        ...(res.deposed ?? []).map((obj, i) => ({ obj, deposed: `v3-${i}` })),
      ];
      for (const { obj, deposed } of objects) {
        const values = expandFlatmap(obj.attributes ?? {});
        if (values.id === undefined && obj.id) values.id = obj.id;
        push(byModule, module, {
          address,
          mode,
          type,
          name,
          ...(index !== undefined ? { index } : {}),
          values: redacted(values, []),
          // 0.11 names dependencies relative to the module (`aws_security_group.web`).
          depends_on: (res.depends_on ?? []).map((d) =>
            module && !d.startsWith('module.') ? `${module}.${d}` : d,
          ),
          ...(obj.tainted ? { tainted: true } : {}),
          ...(deposed ? { deposed_key: deposed } : {}),
        });
      }
    }
  }
  return rootWith(byModule);
}

const numberOrNull = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Brings any state format to the one module tree the mappers read, with every value redacted. */
export function normalizeState(input: StateInput): NormalizedState {
  if (input.kind === 'show_json') {
    const doc: TerraformShowJson = input.doc;
    return {
      format: 'show_json',
      formatVersion: doc.format_version,
      terraformVersion: doc.terraform_version ?? null,
      serial: null,
      lineage: null,
      timestamp: doc.timestamp,
      configuration: doc.configuration,
      root: redactTree(doc.values?.root_module),
    };
  }
  const doc = input.doc;
  return {
    format: input.kind,
    formatVersion: String(doc.version),
    terraformVersion: doc.terraform_version ?? null,
    serial: numberOrNull(doc.serial),
    lineage: typeof doc.lineage === 'string' ? doc.lineage : null,
    timestamp: undefined,
    configuration: undefined,
    root: input.kind === 'state_v4' ? fromV4(input.doc) : fromV3(input.doc),
  };
}
