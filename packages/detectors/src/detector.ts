import type { DomainName, SeverityName } from '@opsi/contracts';

export { SEVERITY_RANK } from '@opsi/contracts';
export type Domain = DomainName;
export type Severity = SeverityName;
export type Effort = 'low' | 'medium' | 'high';

/** One row of a detector's query: one offending resource, named by its ARN, with the fields it used. */
export interface DetectorRow {
  arn: string;
  [field: string]: unknown;
}

/** What a detector says about one root object (a volume, a security group, a launch template…). */
/** A measured quantity and its unit, e.g. `{ value: 730, unit: 'instance-hours' }`. */
export interface Measured {
  value: number;
  unit: string;
}

export interface FindingDraft {
  /**
   * The object the finding is about, for clustering: the same check on the same root is one finding
   * (40 instances behind one open security group are one finding about that group).
   */
  rootKey: string;
  title: string;
  severity: Severity;
  narrative: string;
  /** 0..1: how sure the detector is (1 for a stated fact, lower for metric-based guesses). */
  confidence: number;
  /**
   * The resources concerned, each with the action recommended for it and that action's monthly savings.
   * `measured` is the quantity the resource's monthly cost is billed on, where the inventory's own size
   * (GiB of a volume, a snapshot, a database's storage) is not it: GB a NAT gateway processed, one
   * address for an Elastic IP, instance-hours a month for an instance.
   */
  resources: Array<{ arn: string; actionType: string; savings: number; measured?: Measured }>;
  recommendation: {
    rationale: string;
    actionType: string;
    savings: number;
    effort: Effort;
    priority: 1 | 2 | 3 | 4 | 5;
  };
  /** For findings without a priced resource: an estimate of the monthly savings, counted once per group. */
  estimatedSavings?: number;
  /** How the decision and any savings were reached, from the rows: the trail's reasoning step. */
  reasoning: string;
}

/**
 * A detector: one SQL query over the inventory with the reference's exact conditions, and the findings
 * it makes of the rows. The query names no tenant: it runs in the sandbox, where row-level security
 * scopes it, so the text stored in the evidence trail is exactly what ran and can be re-run as is.
 */
export interface Detector {
  id: string;
  domain: Domain;
  /** A short label of the check, e.g. "Unattached EBS volumes". */
  title: string;
  sql: string;
  findings(rows: DetectorRow[]): FindingDraft[];
}

/** SQL string literal, for the evidence queries that bind a finding's ARNs into the detector's query. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The exact, re-runnable query behind one finding: the detector's query, limited to its resources. */
export function evidenceSql(detector: Detector, arns: string[]): string {
  return `select * from (${detector.sql.trim()}) as detector_rows where arn in (${arns.map(literal).join(', ')}) order by arn`;
}

export const money = (n: number) => `$${n.toFixed(2)}`;
export const round2 = (n: number) => Math.round(n * 100) / 100;
