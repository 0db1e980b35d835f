/**
 * THE definition of what "depends on" means for every edge of the inventory. Blast radius, health
 * roll-up, single points of failure, the resilience scenarios and the agent's tools all read it from
 * here (and the raw recursive CTE of bench/graph is generated from it), so no two of them can disagree
 * on which way an edge points.
 *
 * An edge `from -kind-> to` is read by the first rule that matches its kind (and, where a rule names
 * them, the types at either end):
 * - `dependent: 'from'`: `from` depends on `to` (if `to` fails, `from` is impacted);
 * - `dependent: 'to'`: `to` depends on `from`;
 * - `dependent: null`: structural only (no failure travels along it).
 * `needs` says how a dependent uses several dependencies of the same rule: `'each'` (it fails when any
 * one of them fails: an instance and its subnet) or `'any'` (a pool: it fails only when all of them
 * have failed; a target group and its targets, a load balancer and its target groups).
 */
export type DependentEnd = 'from' | 'to' | null;
export type Needs = 'each' | 'any';

export interface DependencyRule {
  kind: string;
  fromType?: string;
  toType?: string;
  dependent: DependentEnd;
  needs: Needs;
  /** Why, in a sentence: shown in the API reference. */
  meaning: string;
}

export const DEPENDENCY_RULES: readonly DependencyRule[] = [
  {
    kind: 'member-of',
    fromType: 'aws_ec2_autoscaling_group',
    dependent: null,
    needs: 'each',
    meaning: 'An auto scaling group registers its instances in a target group; neither fails with the other.',
  },
  {
    kind: 'member-of',
    dependent: 'from',
    needs: 'each',
    meaning: 'A member needs what it is a member of (instance → subnet, subnet → VPC, access key → user).',
  },
  {
    kind: 'depends-on',
    dependent: 'from',
    needs: 'each',
    meaning: 'Stated or inferred: from needs to (subnet → route table, app → database).',
  },
  {
    kind: 'attached-to',
    dependent: 'to',
    needs: 'each',
    meaning: 'What something is attached to needs it (instance ← its volume, NAT gateway ← its Elastic IP).',
  },
  {
    kind: 'protected-by',
    dependent: 'from',
    needs: 'each',
    meaning: 'A resource loses its protection (and its allowed traffic) with its security group.',
  },
  {
    kind: 'resolves-to',
    dependent: 'from',
    needs: 'each',
    meaning: 'A DNS record needs what it resolves to.',
  },
  {
    kind: 'uses-role',
    dependent: 'from',
    needs: 'each',
    meaning: 'An instance (or instance profile) loses its access with its role.',
  },
  {
    kind: 'contains',
    dependent: 'to',
    needs: 'each',
    meaning: 'An auto scaling group terminates what it contains when it goes.',
  },
  {
    kind: 'targets',
    dependent: 'from',
    needs: 'any',
    meaning: 'A target group serves while at least one of its targets does.',
  },
  {
    kind: 'routes-to',
    fromType: 'aws_ec2_application_load_balancer',
    dependent: 'from',
    needs: 'any',
    meaning: 'A load balancer serves while at least one of its target groups does.',
  },
  {
    kind: 'routes-to',
    dependent: 'from',
    needs: 'each',
    meaning: 'A route table needs the gateway its default route points at.',
  },
  {
    kind: 'monitors',
    dependent: null,
    needs: 'each',
    meaning: 'An alarm watches a resource; neither fails with the other.',
  },
];

/** Kinds that only describe structure when no rule gives them a dependent. */
export interface EdgeLike {
  kind: string;
  fromType: string;
  toType: string;
}

/** The rule that reads an edge (a kind no rule names is structural). */
export function ruleFor(e: EdgeLike): DependencyRule | undefined {
  return DEPENDENCY_RULES.find(
    (r) =>
      r.kind === e.kind &&
      (r.fromType === undefined || r.fromType === e.fromType) &&
      (r.toType === undefined || r.toType === e.toType),
  );
}

/**
 * Reads one edge as a dependency: which end depends on which, and how. Null for a structural edge.
 */
export function asDependency<T>(
  e: EdgeLike & { from: T; to: T },
): { dependent: T; dependency: T; needs: Needs } | null {
  const rule = ruleFor(e);
  if (!rule || rule.dependent === null) return null;
  return rule.dependent === 'from'
    ? { dependent: e.from, dependency: e.to, needs: rule.needs }
    : { dependent: e.to, dependency: e.from, needs: rule.needs };
}

/**
 * The same rules as SQL: for an edge row `e` joined to its end types `ft` and `tt` (text expressions),
 * an expression giving 'from', 'to' or null, so a recursive CTE can walk dependents exactly as the
 * in-memory graph does (bench/graph compares the two).
 */
export function dependentEndSql(kind: string, fromType: string, toType: string): string {
  const cases = DEPENDENCY_RULES.map((r) => {
    const conds = [`${kind} = '${r.kind}'`];
    if (r.fromType) conds.push(`${fromType} = '${r.fromType}'`);
    if (r.toType) conds.push(`${toType} = '${r.toType}'`);
    return `when ${conds.join(' and ')} then ${r.dependent === null ? 'null' : `'${r.dependent}'`}`;
  });
  return `(case ${cases.join(' ')} else null end)`;
}
