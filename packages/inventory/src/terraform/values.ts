/** Readers for the loosely typed `values` of a Terraform resource. Terraform writes "" for unset strings. */
export type Values = Record<string, unknown>;

export const isRecord = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

export function str(v: unknown): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return null;
}

export function num(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** A positive number, else null: Terraform writes 0 where AWS reports nothing (gp2 throughput, RDS iops). */
export function pos(v: unknown): number | null {
  const n = num(v);
  return n !== null && n > 0 ? n : null;
}

export function bool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return null;
}

/** A list (or set) of strings, without empties. */
export function strs(v: unknown): string[] {
  if (typeof v === 'string') return v === '' ? [] : [v];
  if (!Array.isArray(v)) return [];
  return v.map(str).filter((s): s is string => s !== null);
}

/** A nested block list (`[{...}]`), keeping only the objects. */
export function blocks(v: unknown): Values[] {
  if (isRecord(v)) return [v];
  return Array.isArray(v) ? v.filter(isRecord) : [];
}

/** The first block of a single nested block (`metadata_options`, `root_block_device`...). */
export const block = (v: unknown): Values | null => blocks(v)[0] ?? null;

/** A string map (tags, dimensions), dropping null values. */
export function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(v)) return out;
  for (const [k, val] of Object.entries(v)) {
    if (val === null || val === undefined) continue;
    out[k] = typeof val === 'string' ? val : JSON.stringify(val);
  }
  return out;
}

/** The tags AWS holds: `tags_all` includes the provider's default_tags, `tags` only the resource's own. */
export function tagsOf(v: Values): Record<string, string> {
  const all = strMap(v.tags_all);
  return Object.keys(all).length ? all : strMap(v.tags);
}

/** A JSON document Terraform stores as a string (policies); the text itself when it does not parse. */
export function jsonDoc(v: unknown): unknown {
  if (typeof v !== 'string' || v === '') return isRecord(v) ? v : null;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/** `us-east-1a` → `us-east-1`; local and wavelength zones (`us-east-1-bos-1a`) keep their parent region. */
export function regionOfZone(zone: string | null): string | null {
  if (!zone) return null;
  const m = /^([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+)/.exec(zone);
  return m?.[1] ?? null;
}

const ARN = /^arn:(aws[a-z-]*):([a-z0-9-]+):([a-z0-9-]*):(\d{12}|aws)?:(.+)$/;

export interface ParsedArn {
  partition: string;
  service: string;
  region: string;
  account: string;
  resource: string;
}

export function parseArn(v: unknown): ParsedArn | null {
  if (typeof v !== 'string') return null;
  const m = ARN.exec(v);
  if (!m) return null;
  return { partition: m[1]!, service: m[2]!, region: m[3]!, account: m[4] ?? '', resource: m[5]! };
}

/** Every string in a value tree, depth first (to find ARNs anywhere in the state). */
export function* stringsIn(v: unknown, depth = 0): Generator<string> {
  if (depth > 12) return;
  if (typeof v === 'string') yield v;
  else if (Array.isArray(v)) for (const x of v) yield* stringsIn(x, depth + 1);
  else if (isRecord(v)) for (const x of Object.values(v)) yield* stringsIn(x, depth + 1);
}

/** The most frequent item, ties broken alphabetically so the answer does not depend on order. */
export function mostFrequent(items: Iterable<string>): string | null {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  let best: string | null = null;
  let bestN = 0;
  for (const [k, n] of counts) {
    if (n > bestN || (n === bestN && best !== null && k < best)) {
      best = k;
      bestN = n;
    }
  }
  return best;
}
