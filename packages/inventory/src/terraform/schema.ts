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

/** The document `terraform show -json` prints for a state (not a plan). */
export const TerraformShowJson = z
  .object({
    format_version: z
      .string({
        error: (iss) =>
          iss.input === undefined
            ? 'missing (every `terraform show -json` document has one)'
            : 'must be a string like "1.0"',
      })
      .regex(/^1\.\d+$/, 'must be 1.x'),
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

/** The input is not `terraform show -json` output of a state; `problems` names each one found. */
export class TerraformStateError extends Error {
  override readonly name = 'TerraformStateError';
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}

const PREFIX = 'Not `terraform show -json` state output';

/** Validates a parsed (or still textual) document; throws TerraformStateError with the problems named. */
export function validateTerraformShowJson(input: unknown): TerraformShowJson {
  let doc = input;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc) as unknown;
    } catch (err) {
      throw new TerraformStateError(`${PREFIX}: the text is not JSON (${(err as Error).message})`);
    }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    const got = doc === null ? 'null' : Array.isArray(doc) ? 'an array' : typeof doc;
    throw new TerraformStateError(`${PREFIX}: expected a JSON object, got ${got}`);
  }
  const obj = doc as Record<string, unknown>;
  // Name the common mix-ups outright: they validate badly and the fix is a different command.
  if ('resource_changes' in obj || 'planned_values' in obj) {
    throw new TerraformStateError(
      `${PREFIX}: this is a plan (\`terraform show -json <planfile>\`); export the state with \`terraform show -json\``,
    );
  }
  if (typeof obj.version === 'number' && Array.isArray(obj.resources) && !('format_version' in obj)) {
    throw new TerraformStateError(
      `${PREFIX}: this is a raw terraform.tfstate file (version ${obj.version}); convert it with \`terraform show -json\``,
    );
  }
  const parsed = TerraformShowJson.safeParse(doc);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const path = i.path.length
        ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')
        : '';
      return `${path ? path.replace(/^\./, '') + ': ' : ''}${i.message}`;
    });
    const shown = problems.slice(0, 5).join('; ');
    const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
    throw new TerraformStateError(`${PREFIX}: ${shown}${more}`, problems);
  }
  return parsed.data;
}
