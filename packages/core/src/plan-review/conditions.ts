/**
 * The detectors' conditions (packages/detectors), stated over one resource in the inventory's
 * vocabulary, so that plan review can ask them of a resource as the plan would leave it: a condition
 * true after the plan and not already an open finding is a finding the plan introduces; an open
 * finding whose condition is false afterwards is one the plan fixes. They are the detectors' exact
 * conditions; the detectors' SQL reads many resources at once (joins for "in use" groups, launch
 * templates), which here comes in through `context`. conditions.int.test.ts checks that, asked of
 * the live demo inventory, they flag exactly the resources the detectors flagged.
 */

export interface ShapedResource {
  type: string;
  attributes: Record<string, unknown>;
  tags: Record<string, string>;
}

export interface ConditionContext {
  /** The security group is used by a live instance (the SG detectors look only at groups in use). */
  sgInUse: boolean;
}

export interface Condition {
  checkId: string;
  domain: 'finops' | 'security' | 'sre';
  type: string;
  title: string;
  /** The severity a new finding of this kind starts at (the detectors refine it with live context). */
  severity: 'critical' | 'high' | 'medium' | 'low';
  test(r: ShapedResource, ctx: ConditionContext): boolean;
}

type Rule = Record<string, unknown>;

const rulesOf = (r: ShapedResource): Rule[] =>
  Array.isArray(r.attributes.rules) ? (r.attributes.rules as Rule[]) : [];
const internet = (rule: Rule) =>
  rule.type === 'ingress' && (rule.cidr_ipv4 === '0.0.0.0/0' || rule.cidr_ipv6 === '::/0');
const PROTO: Record<string, string[]> = { tcp: ['tcp', '6'], udp: ['udp', '17'] };
const protoIn = (rule: Rule, protocols: string[]) =>
  protocols.flatMap((p) => PROTO[p]!).includes(String(rule.ip_protocol));
/** Containment, not equality: a 0–1024 range admits 22 (domain notes §2.3 S1′). */
const coversPort = (port: number, protocols: string[]) => (rule: Rule) =>
  rule.ip_protocol === '-1' ||
  (protoIn(rule, protocols) && Number(rule.from_port) <= port && Number(rule.to_port) >= port);
const coversAll = (rule: Rule) =>
  rule.ip_protocol === '-1' ||
  (protoIn(rule, ['tcp', 'udp']) && Number(rule.from_port) <= 0 && Number(rule.to_port) >= 65535);
const openAll = (r: ShapedResource) => rulesOf(r).some((x) => internet(x) && coversAll(x));
const aurora = (r: ShapedResource) => String(r.attributes.engine ?? '').startsWith('aurora');

export const CONDITIONS: Condition[] = [
  {
    checkId: 'security.sg_all_ports_open',
    domain: 'security',
    type: 'aws_vpc_security_group',
    title: 'Security group open to the Internet on all ports',
    severity: 'critical',
    test: (r, ctx) => ctx.sgInUse && openAll(r),
  },
  {
    checkId: 'security.sg_ssh_open',
    domain: 'security',
    type: 'aws_vpc_security_group',
    title: 'Security group open to the Internet on SSH (22)',
    severity: 'high',
    test: (r, ctx) =>
      ctx.sgInUse && !openAll(r) && rulesOf(r).some((x) => internet(x) && coversPort(22, ['tcp'])(x)),
  },
  {
    checkId: 'security.sg_rdp_open',
    domain: 'security',
    type: 'aws_vpc_security_group',
    title: 'Security group open to the Internet on RDP (3389)',
    severity: 'high',
    test: (r, ctx) =>
      ctx.sgInUse &&
      !openAll(r) &&
      rulesOf(r).some((x) => internet(x) && coversPort(3389, ['tcp', 'udp'])(x)),
  },
  {
    checkId: 'security.rds_public',
    domain: 'security',
    type: 'aws_rds_db_instance',
    title: 'Database publicly accessible',
    severity: 'high',
    test: (r) => r.attributes.publicly_accessible === true,
  },
  {
    checkId: 'security.rds_unencrypted',
    domain: 'security',
    type: 'aws_rds_db_instance',
    title: 'Database storage not encrypted',
    severity: 'medium',
    test: (r) => r.attributes.storage_encrypted === false,
  },
  {
    checkId: 'security.ebs_unencrypted',
    domain: 'security',
    type: 'aws_ebs_volume',
    title: 'EBS volume not encrypted',
    severity: 'medium',
    test: (r) => r.attributes.encrypted === false,
  },
  {
    checkId: 'security.ec2_imdsv1',
    domain: 'security',
    type: 'aws_ec2_instance',
    title: 'Instance allows IMDSv1',
    severity: 'medium',
    test: (r) => {
      const m = r.attributes.metadata_options as Record<string, unknown> | null | undefined;
      const state = String(r.attributes.instance_state ?? 'running');
      return (
        !['terminated', 'shutting-down'].includes(state) && (m?.http_tokens ?? 'optional') !== 'required'
      );
    },
  },
  {
    checkId: 'sre.rds_single_az',
    domain: 'sre',
    type: 'aws_rds_db_instance',
    title: 'Database in a single Availability Zone',
    severity: 'medium',
    test: (r) => !aurora(r) && r.attributes.multi_az === false,
  },
  {
    checkId: 'sre.rds_no_backups',
    domain: 'sre',
    type: 'aws_rds_db_instance',
    title: 'Database without automated backups',
    severity: 'high',
    test: (r) => !aurora(r) && Number(r.attributes.backup_retention_period ?? 0) < 1,
  },
  {
    checkId: 'sre.rds_no_deletion_protection',
    domain: 'sre',
    type: 'aws_rds_db_instance',
    title: 'Database without deletion protection',
    severity: 'medium',
    test: (r) => !aurora(r) && r.attributes.deletion_protection === false,
  },
  {
    checkId: 'finops.ebs_gp2_to_gp3',
    domain: 'finops',
    type: 'aws_ebs_volume',
    title: 'gp2 volume that can move to gp3',
    severity: 'low',
    test: (r) => r.attributes.volume_type === 'gp2',
  },
  {
    checkId: 'finops.ebs_io_to_gp3',
    domain: 'finops',
    type: 'aws_ebs_volume',
    title: 'io1/io2 volume with IOPS gp3 covers',
    severity: 'low',
    test: (r) =>
      ['io1', 'io2'].includes(String(r.attributes.volume_type)) && Number(r.attributes.iops ?? 0) <= 16000,
  },
];

/** Statements that allow every action on every resource (security.iam_admin_star), in a policy document. */
export function allowsStarStar(policy: unknown): boolean {
  let doc = policy;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch {
      return false;
    }
  }
  if (!doc || typeof doc !== 'object') return false;
  const raw = (doc as Record<string, unknown>).Statement;
  const statements = Array.isArray(raw) ? raw : raw ? [raw] : [];
  const list = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String);
  return statements.some((s) => {
    if (!s || typeof s !== 'object') return false;
    const st = s as Record<string, unknown>;
    return st.Effect === 'Allow' && list(st.Action).includes('*') && list(st.Resource).includes('*');
  });
}
