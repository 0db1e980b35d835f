import { z } from 'zod';

/** One resource instance as `terraform show -json` prints it (values representation, format 1.x). */
export const TerraformStateResource = z
  .object({
    address: z.string().min(1),
    mode: z.enum(['managed', 'data']),
    type: z.string().min(1),
    name: z.string(),
    index: z.union([z.number(), z.string()]).optional(),
    provider_name: z.string().optional(),
    schema_version: z.number().optional(),
    values: z.record(z.string(), z.unknown()).nullish(),
    sensitive_values: z.unknown().optional(),
    depends_on: z.array(z.string()).optional(),
    tainted: z.boolean().optional(),
    deposed_key: z.string().optional(),
  })
  .loose();
export type TerraformStateResource = z.infer<typeof TerraformStateResource>;

export interface TerraformStateModule {
  address?: string | undefined;
  resources?: TerraformStateResource[] | undefined;
  child_modules?: TerraformStateModule[] | undefined;
}

export const TerraformStateModule: z.ZodType<TerraformStateModule> = z
  .object({
    address: z.string().optional(),
    resources: z.array(TerraformStateResource).optional(),
    get child_modules() {
      return z.array(TerraformStateModule).optional();
    },
  })
  .loose();

/** The document `terraform show -json` prints for a state (not a plan), any format from 0.1 (Terraform 0.12). */
export const TerraformShowJson = z
  .object({
    format_version: z
      .string({
        error: (iss) =>
          iss.input === undefined
            ? 'missing (every `terraform show -json` document has one)'
            : 'must be a string like "1.0"',
      })
      .regex(/^\d+\.\d+$/, 'must be a version like "0.1" or "1.0"'),
    terraform_version: z.string().optional(),
    timestamp: z.string().optional(),
    values: z
      .object({
        outputs: z.record(z.string(), z.unknown()).optional(),
        root_module: TerraformStateModule,
      })
      .loose()
      .optional(),
    configuration: z.unknown().optional(),
  })
  .loose();
export type TerraformShowJson = z.infer<typeof TerraformShowJson>;

/** One object of a version 4 state: the current one (no `deposed`) or a deposed one, maybe tainted. */
export const RawInstanceV4 = z
  .object({
    index_key: z.union([z.number(), z.string()]).nullish(),
    status: z.string().nullish(),
    deposed: z.string().nullish(),
    schema_version: z.number().optional(),
    attributes: z.record(z.string(), z.unknown()).nullish(),
    attributes_flat: z.record(z.string(), z.unknown()).nullish(),
    sensitive_attributes: z.unknown().optional(),
    dependencies: z.array(z.string()).nullish(),
    depends_on: z.array(z.string()).nullish(),
  })
  .loose();
export type RawInstanceV4 = z.infer<typeof RawInstanceV4>;

/** A raw `terraform.tfstate`, version 4 (Terraform 0.12 and later). */
export const RawStateV4 = z
  .object({
    version: z.literal(4),
    terraform_version: z.string().optional(),
    serial: z.number().optional(),
    lineage: z.string().optional(),
    resources: z.array(
      z
        .object({
          module: z.string().optional(),
          mode: z.enum(['managed', 'data']),
          type: z.string().min(1),
          name: z.string(),
          each: z.string().optional(),
          provider: z.string().optional(),
          instances: z.array(RawInstanceV4),
        })
        .loose(),
    ),
  })
  .loose();
export type RawStateV4 = z.infer<typeof RawStateV4>;

/** One object of a version 3 state (`primary`, or an entry of `deposed`). */
export const RawInstanceV3 = z
  .object({
    id: z.string().optional(),
    attributes: z.record(z.string(), z.unknown()).nullish(),
    tainted: z.boolean().optional(),
  })
  .loose();

/** A raw `terraform.tfstate`, version 3 (Terraform 0.11 and before): modules keyed by path. */
export const RawStateV3 = z
  .object({
    version: z.literal(3),
    terraform_version: z.string().optional(),
    serial: z.number().optional(),
    lineage: z.string().optional(),
    modules: z.array(
      z
        .object({
          path: z.array(z.string()).min(1),
          resources: z.record(
            z.string(),
            z
              .object({
                type: z.string().min(1),
                depends_on: z.array(z.string()).nullish(),
                primary: RawInstanceV3.nullish(),
                deposed: z.array(RawInstanceV3).nullish(),
                provider: z.string().optional(),
              })
              .loose(),
          ),
        })
        .loose(),
    ),
  })
  .loose();
export type RawStateV3 = z.infer<typeof RawStateV3>;

/** Any state document the connector reads, told apart by its own version fields. */
export type StateInput =
  | { kind: 'show_json'; doc: TerraformShowJson }
  | { kind: 'state_v4'; doc: RawStateV4 }
  | { kind: 'state_v3'; doc: RawStateV3 };

/** The input is not a Terraform state; `problems` names each one found. */
export class TerraformStateError extends Error {
  override readonly name = 'TerraformStateError';
  /** The state (its source's name) that could not be read or parsed, when a connector read it. */
  source: string | undefined;
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}

const PREFIX = 'Not a Terraform state';

function problemsOf(error: z.ZodError): string[] {
  return error.issues.map((i) => {
    const path = i.path.length
      ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')
      : '';
    return `${path ? path.replace(/^\./, '') + ': ' : ''}${i.message}`;
  });
}

function check<T>(schema: z.ZodType<T>, doc: unknown, what: string): T {
  const parsed = schema.safeParse(doc);
  if (parsed.success) return parsed.data;
  const problems = problemsOf(parsed.error);
  const shown = problems.slice(0, 5).join('; ');
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  throw new TerraformStateError(`${PREFIX} (${what}): ${shown}${more}`, problems);
}

/**
 * Validates a parsed (or still textual) state: a raw `terraform.tfstate` (version 3 or 4) or the output
 * of `terraform show -json` (any format_version). Throws TerraformStateError with the problems named.
 */
export function validateTerraformState(input: unknown): StateInput {
  let doc = input;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc.replace(/^\uFEFF/, '')) as unknown;
    } catch (err) {
      throw new TerraformStateError(`${PREFIX}: the text is not JSON (${(err as Error).message})`);
    }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    const got = doc === null ? 'null' : Array.isArray(doc) ? 'an array' : typeof doc;
    throw new TerraformStateError(`${PREFIX}: expected a JSON object, got ${got}`);
  }
  const obj = doc as Record<string, unknown>;
  // Name the common mix-up outright: it validates badly and the fix is a different file.
  if ('resource_changes' in obj || 'planned_values' in obj) {
    throw new TerraformStateError(
      `${PREFIX}: this is a plan (\`terraform show -json <planfile>\`); give the state (terraform.tfstate, or \`terraform show -json\` without a plan file)`,
    );
  }
  if (!('format_version' in obj) && 'version' in obj) {
    if (obj.version === 4)
      return { kind: 'state_v4', doc: check(RawStateV4, doc, 'terraform.tfstate version 4') };
    if (obj.version === 3)
      return { kind: 'state_v3', doc: check(RawStateV3, doc, 'terraform.tfstate version 3') };
    throw new TerraformStateError(
      `${PREFIX}: terraform.tfstate version ${JSON.stringify(obj.version)} is not read (versions 3 and 4 are); run \`terraform state pull\` with Terraform 0.11 or later to upgrade it`,
    );
  }
  return { kind: 'show_json', doc: check(TerraformShowJson, doc, '`terraform show -json` output') };
}

/** Validates `terraform show -json` output of a state; throws TerraformStateError with the problems named. */
export function validateTerraformShowJson(input: unknown): TerraformShowJson {
  const state = validateTerraformState(input);
  if (state.kind !== 'show_json')
    throw new TerraformStateError(
      `${PREFIX}: expected \`terraform show -json\` output, got a raw terraform.tfstate`,
    );
  return state.doc;
}
