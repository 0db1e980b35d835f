/**
 * A Terraform plan as plan review reads it, whichever form it came in (`terraform plan` text or
 * `terraform show -json <planfile>`): one entry per resource instance the plan touches, with what
 * Terraform said about it, and the changes Terraform detected outside itself (drift).
 */

export type PlanAction = 'create' | 'update' | 'delete' | 'replace' | 'read' | 'no-op' | 'forget';

/** A value Terraform will know only after apply, or hides because it is sensitive. */
export type Path = Array<string | number>;

export interface PlanLines {
  /** 1-based line numbers in the text as posted (its header comment to its closing brace). */
  start: number;
  end: number;
}

export interface PlanResourceChange {
  /** Full instance address: `module.net.aws_subnet.private["a"]`. */
  address: string;
  mode: 'managed' | 'data';
  type: string;
  name: string;
  action: PlanAction;
  /** For a replacement: `-/+` destroys first, `+/-` creates the new object first (create_before_destroy). */
  replaceOrder: 'delete_first' | 'create_first' | null;
  /** Why Terraform acts so: `replace_because_tainted`, `replace_by_request`, `delete_because_no_resource_config`… */
  reason: string | null;
  /** Attributes marked `# forces replacement` (JSON: replace_paths). */
  replacePaths: Path[];
  /** The address this object moved from, when the configuration moved it. */
  movedFrom: string | null;
  /** The id of the object being imported, when the plan imports it ('' when Terraform does not say). */
  importing: string | null;
  /** Set for a deposed object (the old half of an unfinished replacement). */
  deposed: string | null;
  /** What is known of the object before and after, Terraform's attribute names (null: none). */
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  /** Attributes known only after apply. */
  afterUnknown: Path[];
  /** Attributes whose values the plan hides as sensitive. */
  sensitive: Path[];
  /** Where the plan shows it: text line range, or the JSON element. */
  source: { kind: 'text'; lines: PlanLines } | { kind: 'json'; pointer: string };
}

/** An object Terraform found changed (or deleted) outside Terraform since the last apply. */
export interface PlanDrift {
  address: string;
  type: string;
  name: string;
  change: 'update' | 'delete';
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  source: { kind: 'text'; lines: PlanLines } | { kind: 'json'; pointer: string };
}

export interface PlanSummaryLine {
  import: number;
  add: number;
  change: number;
  destroy: number;
}

export interface ParsedPlan {
  format: 'text' | 'legacy_text' | 'json';
  terraformVersion: string | null;
  changes: PlanResourceChange[];
  drift: PlanDrift[];
  /** The "Plan: N to add…" line as Terraform printed it (text), null when absent. */
  summaryLine: PlanSummaryLine | null;
  /** True when Terraform said there is nothing to do. */
  noChanges: boolean;
  outputs: Array<{ name: string; action: PlanAction }>;
  errors: string[];
  warnings: string[];
}

/** Splits `module.a.module.b.aws_x.y["k"]` into mode, type and name. */
export function addressParts(address: string): { mode: 'managed' | 'data'; type: string; name: string } {
  // Drop module prefixes (their keys may hold dots inside quotes) and the instance key.
  let rest = address;
  for (;;) {
    const m = /^module\.[A-Za-z0-9_-]+(\[(?:"(?:[^"\\]|\\.)*"|\d+)\])?\./.exec(rest);
    if (!m) break;
    rest = rest.slice(m[0].length);
  }
  rest = rest.replace(/\[(?:"(?:[^"\\]|\\.)*"|\d+)\]$/, '');
  const data = rest.startsWith('data.');
  if (data) rest = rest.slice(5);
  const dot = rest.indexOf('.');
  return {
    mode: data ? 'data' : 'managed',
    type: dot < 0 ? rest : rest.slice(0, dot),
    name: dot < 0 ? '' : rest.slice(dot + 1),
  };
}
