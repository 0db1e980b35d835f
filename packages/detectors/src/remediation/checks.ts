/**
 * Read-only checks of a resolution step: what to describe (one resource, by ARN) and what its current
 * state must be for the step to be done. A check is data (stored with the step, judged later by the
 * verify job against what the tenant's connector describes), so every expectation is one of these kinds.
 */
export type Expect =
  | { kind: 'absent' }
  | { kind: 'equals'; path: string; value: string | number | boolean | null }
  | { kind: 'not_equals'; path: string; value: string | number | boolean | null }
  | { kind: 'at_least'; path: string; value: number }
  | { kind: 'non_empty'; path: string }
  | { kind: 'no_rule'; rule: RuleRef };

/** One ingress rule of a security group, as the inventory (and the demo) describe it. */
export interface RuleRef {
  ip_protocol: string;
  from_port: number | null;
  to_port: number | null;
  cidr_ipv4: string | null;
  cidr_ipv6: string | null;
}

export interface StepCheck {
  arn: string;
  type: string;
  native_id: string;
  region: string;
  expect: Expect;
}

/** What a connector says about one resource now: its attributes, or null when it does not exist. */
export type Described = { attributes: Record<string, unknown> } | null;

export interface Judgement {
  passed: boolean;
  /** What was observed, in one line, for the step's last_check. */
  observed: string;
}

function at(attributes: Record<string, unknown>, path: string): unknown {
  let value: unknown = attributes;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

const show = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v));

/** Judges a described resource against a check's expectation. Throws on an expectation it cannot read. */
export function judge(expect: Expect, described: Described): Judgement {
  if (expect.kind === 'absent')
    return described
      ? { passed: false, observed: 'the resource still exists' }
      : { passed: true, observed: 'the resource no longer exists' };
  if (!described) return { passed: false, observed: 'the resource does not exist' };
  const a = described.attributes;
  switch (expect.kind) {
    case 'equals': {
      const v = at(a, expect.path);
      return { passed: (v ?? null) === expect.value, observed: `${expect.path} = ${show(v)}` };
    }
    case 'not_equals': {
      const v = at(a, expect.path);
      return { passed: (v ?? null) !== expect.value, observed: `${expect.path} = ${show(v)}` };
    }
    case 'at_least': {
      const v = Number(at(a, expect.path));
      return {
        passed: Number.isFinite(v) && v >= expect.value,
        observed: `${expect.path} = ${show(at(a, expect.path))}`,
      };
    }
    case 'non_empty': {
      const v = at(a, expect.path);
      const n = Array.isArray(v) ? v.length : v ? 1 : 0;
      return { passed: n > 0, observed: `${expect.path} = ${show(v)}` };
    }
    case 'no_rule': {
      const rules = (a.rules as Array<Record<string, unknown>> | undefined) ?? [];
      const r = expect.rule;
      const present = rules.some(
        (x) =>
          x.type === 'ingress' &&
          x.ip_protocol === r.ip_protocol &&
          (r.ip_protocol === '-1' || (x.from_port === r.from_port && x.to_port === r.to_port)) &&
          (x.cidr_ipv4 ?? null) === r.cidr_ipv4 &&
          (x.cidr_ipv6 ?? null) === r.cidr_ipv6,
      );
      return {
        passed: !present,
        observed: present
          ? 'the rule is still in the group'
          : `the rule is gone (${rules.length} rule(s) left)`,
      };
    }
    default:
      throw new Error(`unknown expectation ${JSON.stringify(expect)}`);
  }
}

/** The AWS CLI describe call that shows a resource, as a user would run it (read-only). */
export function describeCommand(
  r: { type: string; native_id: string; arn: string; region: string; name?: string | null },
  query?: string,
): string {
  const region = r.region && r.region !== 'global' ? ` --region ${r.region}` : '';
  const q = query ? ` --query '${query}'` : '';
  const id = r.native_id;
  const base: Record<string, string> = {
    aws_ebs_volume: `aws ec2 describe-volumes --volume-ids ${id}`,
    aws_ec2_instance: `aws ec2 describe-instances --instance-ids ${id}`,
    aws_vpc_security_group: `aws ec2 describe-security-groups --group-ids ${id}`,
    aws_vpc_eip: `aws ec2 describe-addresses --allocation-ids ${id}`,
    aws_ebs_snapshot: `aws ec2 describe-snapshots --snapshot-ids ${id}`,
    aws_vpc_nat_gateway: `aws ec2 describe-nat-gateways --nat-gateway-ids ${id}`,
    aws_rds_db_instance: `aws rds describe-db-instances --db-instance-identifier ${id}`,
    aws_rds_db_snapshot: `aws rds describe-db-snapshots --db-snapshot-identifier ${id}`,
    aws_ec2_application_load_balancer: `aws elbv2 describe-load-balancers --load-balancer-arns ${r.arn}`,
    aws_s3_bucket: `aws s3api get-public-access-block --bucket ${id}`,
    aws_cloudwatch_log_group: `aws logs describe-log-groups --log-group-name-prefix ${id}`,
    aws_iam_access_key: `aws iam list-access-keys --user-name ${r.name ?? id}`,
    aws_ec2_autoscaling_group: `aws autoscaling describe-auto-scaling-groups --auto-scaling-group-names ${id}`,
    aws_elasticache_replication_group: `aws elasticache describe-replication-groups --replication-group-id ${id}`,
    aws_dynamodb_table: `aws dynamodb describe-continuous-backups --table-name ${id}`,
    aws_cloudwatch_alarm: `aws cloudwatch describe-alarms --alarm-names ${id}`,
    aws_cloudtrail_trail: `aws cloudtrail describe-trails --trail-name-list ${id}`,
    aws_iam_user: `aws iam list-mfa-devices --user-name ${id}`,
    aws_iam_policy: `aws iam get-policy --policy-arn ${r.arn}`,
    aws_account: `aws iam get-account-summary`,
  };
  const global = ['aws_iam_access_key', 'aws_iam_user', 'aws_iam_policy', 'aws_account', 'aws_s3_bucket'];
  return `${base[r.type] ?? `aws resourcegroupstaggingapi get-resources --resource-arn-list ${r.arn}`}${global.includes(r.type) ? '' : region}${q}`;
}
