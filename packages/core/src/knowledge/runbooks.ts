import { type Db } from '@opsi/db';
import { appendAudit } from '../audit';
import type { Auth } from '../context';
import { NotFound } from '../errors';
import {
  findFindingCheck,
  findFindingResourceServices,
  findTenantRunbooks,
  insertRunbook,
} from './repository';

export interface AppliesTo {
  detectors: string[];
  resource_types: string[];
  alert_fingerprints: string[];
}

export interface Runbook {
  id: string;
  title: string;
  service: string | null;
  applies_to: AppliesTo;
  steps: string[];
  source: 'built_in' | 'tenant';
  created_by: string | null;
  /** Tenant runbooks: the last write. Built-in ones: when their text last changed (kept with the text). */
  updated_at: Date;
}

/** The release that shipped the built-in runbooks' current text (commit 8634604). */
const TEXT_OF_2026_11_24 = '2026-11-24T22:05:23Z';

/**
 * `textUpdatedAt` is part of the runbook's text: whoever changes a title, step or applies_to changes it
 * too (runbooks.test.ts pins a digest of each text to its date, so an edit without a new date fails).
 */
const builtIn = (
  slug: string,
  title: string,
  detectors: string[],
  resourceTypes: string[],
  steps: string[],
  textUpdatedAt: string = TEXT_OF_2026_11_24,
): Runbook => ({
  id: `builtin:${slug}`,
  title,
  service: null,
  applies_to: { detectors, resource_types: resourceTypes, alert_fingerprints: [] },
  steps,
  source: 'built_in',
  created_by: null,
  updated_at: new Date(textUpdatedAt),
});

/** One runbook per detector family, shipped with the service; `applies_to.detectors` names every check. */
export const BUILT_IN_RUNBOOKS: Runbook[] = [
  builtIn(
    'ebs-storage-waste',
    'Reduce EBS storage waste',
    [
      'finops.ebs_unattached',
      'finops.ebs_gp2_to_gp3',
      'finops.ebs_io_to_gp3',
      'finops.ebs_on_stopped_instances',
    ],
    ['aws_ebs_volume', 'aws_ec2_launch_template'],
    [
      'Confirm the volume is not needed: check its attachments, tags (owner, service) and the last read/write activity.',
      'Before deleting anything, take a snapshot and tag it with the ticket or finding id.',
      'For gp2 and io1/io2 volumes, migrate in place to gp3 (aws ec2 modify-volume --volume-type gp3); no detach or downtime is needed.',
      'When a launch template creates the volumes, change the template so new instances get gp3.',
      'Re-run the finding’s evidence query to confirm the volume is gone or migrated.',
    ],
  ),
  builtIn(
    'idle-compute',
    'Rightsize or stop idle compute',
    ['finops.ec2_low_cpu', 'finops.ec2_previous_generation', 'finops.ec2_stopped_long', 'finops.rds_idle'],
    ['aws_ec2_instance', 'aws_rds_db_instance'],
    [
      'Check 30 days of CPU and connections with the owner: is the load seasonal (month-end batches)?',
      'Pick the next smaller (or current-generation) size that keeps peak CPU under 60 %.',
      'Change the type in the infrastructure code, not only in the console, so the change is not reverted.',
      'Stop or terminate long-stopped instances after a final snapshot of their volumes.',
      'Watch CPU and latency for a day after the change.',
    ],
  ),
  builtIn(
    'unused-network',
    'Release unused network resources',
    ['finops.eip_unassociated', 'finops.nat_unused', 'finops.elb_idle'],
    ['aws_vpc_eip', 'aws_vpc_nat_gateway', 'aws_ec2_application_load_balancer'],
    [
      'Check that no DNS record, allow-list or partner configuration refers to the address or endpoint.',
      'Release unassociated Elastic IPs (aws ec2 release-address --allocation-id …).',
      'Delete NAT gateways and load balancers with no traffic or targets after confirming routes and DNS do not use them.',
      'Re-run the finding’s evidence query.',
    ],
  ),
  builtIn(
    'snapshots-and-logs',
    'Clean up old snapshots and unbounded logs',
    ['finops.ebs_snapshot_old', 'finops.rds_snapshot_orphaned', 'finops.logs_no_retention'],
    ['aws_ebs_snapshot', 'aws_rds_db_snapshot', 'aws_cloudwatch_log_group'],
    [
      'Check the retention policy the data falls under (legal hold, compliance) before deleting anything.',
      'Delete snapshots past retention, or move them to an archive tier.',
      'Set a retention period on log groups (aws logs put-retention-policy).',
      'Prefer a lifecycle policy (Data Lifecycle Manager, AWS Backup) so the finding does not come back.',
    ],
  ),
  builtIn(
    'network-exposure',
    'Close ports open to the internet',
    ['security.sg_ssh_open', 'security.sg_rdp_open', 'security.sg_all_ports_open'],
    ['aws_vpc_security_group'],
    [
      'Find who opened the rule and why (the drift section and CloudTrail name the actor).',
      'Replace 0.0.0.0/0 and ::/0 with the office or VPN range, or use Session Manager instead of SSH/RDP.',
      'Revoke the rule (aws ec2 revoke-security-group-ingress …) and fix the infrastructure code.',
      'Re-run the finding’s evidence query and check the service still answers.',
    ],
  ),
  builtIn(
    'identity',
    'Tighten identity and access',
    [
      'security.iam_access_key_old',
      'security.iam_admin_star',
      'security.iam_console_user_no_mfa',
      'security.root_mfa_disabled',
    ],
    ['aws_iam_user', 'aws_iam_access_key', 'aws_iam_role', 'aws_account'],
    [
      'Enable MFA for the root account and every console user.',
      'Rotate access keys older than 90 days: create the new key, deploy it, then deactivate and delete the old one.',
      'Replace Action "*" policies with the actions the principal used (IAM Access Analyzer can generate them).',
      'Re-run the finding’s evidence query.',
    ],
  ),
  builtIn(
    'data-exposure',
    'Protect data stores',
    [
      'security.s3_public',
      'security.rds_public',
      'security.rds_unencrypted',
      'security.ebs_unencrypted',
      'security.toxic_exposed_instance_sensitive_data',
      'sre.toxic_unprotected_public_database',
    ],
    ['aws_s3_bucket', 'aws_rds_db_instance', 'aws_ebs_volume', 'aws_ec2_instance'],
    [
      'Turn on the bucket’s and account’s public access block; remove public grants from the bucket policy and ACL.',
      'Make databases private (publicly_accessible false) and reach them through the VPC.',
      'Encrypt at rest: copy the snapshot with encryption and restore from it, or enable default EBS encryption.',
      'For toxic combinations, break the path first (close the exposure), then fix the rest.',
      'Re-run the finding’s evidence query.',
    ],
  ),
  builtIn(
    'instance-hardening',
    'Harden instances and audit logging',
    ['security.ec2_imdsv1', 'security.cloudtrail_no_multi_region'],
    ['aws_ec2_instance', 'aws_ec2_launch_template', 'aws_cloudtrail_trail'],
    [
      'Require IMDSv2 (aws ec2 modify-instance-metadata-options --http-tokens required) and set it in launch templates.',
      'Make the CloudTrail trail multi-region and logging.',
      'Re-run the finding’s evidence query.',
    ],
  ),
  builtIn(
    'database-resilience',
    'Make databases recoverable',
    [
      'sre.rds_no_backups',
      'sre.rds_no_deletion_protection',
      'sre.rds_single_az',
      'sre.dynamodb_no_pitr',
      'sre.elasticache_no_failover',
    ],
    ['aws_rds_db_instance', 'aws_dynamodb_table', 'aws_elasticache_replication_group'],
    [
      'Turn backups back on (backup_retention_period ≥ 7) and point-in-time recovery for DynamoDB.',
      'Enable deletion protection on production databases.',
      'Plan Multi-AZ (or automatic failover) in a maintenance window: it restarts nothing, but costs more.',
      'Re-run the finding’s evidence query.',
    ],
  ),
  builtIn(
    'availability',
    'Remove single points of failure',
    ['sre.asg_capacity_one', 'sre.asg_single_az', 'sre.lb_single_az', 'sre.nat_single_for_many_azs'],
    ['aws_ec2_autoscaling_group', 'aws_ec2_application_load_balancer', 'aws_vpc_nat_gateway'],
    [
      'Spread the group or load balancer over at least two availability zones.',
      'Raise min/desired capacity to 2 for anything users depend on.',
      'Give each AZ its own NAT gateway and route table.',
      'Check the blast radius of the resource before and after.',
    ],
  ),
  builtIn(
    'alarms',
    'Make alarms reach someone',
    ['sre.alarm_no_actions', 'sre.resource_no_alarm'],
    ['aws_cloudwatch_alarm'],
    [
      'Add an SNS action (or the on-call tool’s integration) to every alarm that matters.',
      'Create alarms for critical resources (CPU, errors, free storage) that have none.',
      'Send a test notification and confirm someone received it.',
    ],
  ),
];

function normalize(applies: Partial<AppliesTo> | null | undefined): AppliesTo {
  return {
    detectors: applies?.detectors ?? [],
    resource_types: applies?.resource_types ?? [],
    alert_fingerprints: applies?.alert_fingerprints ?? [],
  };
}

async function tenantRunbooks(db: Db, tenantId: string): Promise<Runbook[]> {
  const rows = await findTenantRunbooks(db, tenantId);
  return rows.map((r) => ({ ...r, applies_to: normalize(r.applies_to), source: 'tenant' as const }));
}

/** Built-in and tenant runbooks; `service` keeps those for that service and those for every service. */
export async function listRunbooks(
  db: Db,
  tenantId: string,
  filter: { service?: string | undefined; source?: 'built_in' | 'tenant' | undefined } = {},
): Promise<Runbook[]> {
  const all = [...(await tenantRunbooks(db, tenantId)), ...BUILT_IN_RUNBOOKS];
  return all.filter(
    (r) =>
      (!filter.source || r.source === filter.source) &&
      (!filter.service || r.service === null || r.service.toLowerCase() === filter.service.toLowerCase()),
  );
}

/** Writes a tenant runbook; audit-logged. */
export async function createRunbook(
  db: Db,
  auth: Auth,
  input: {
    title: string;
    service?: string | undefined;
    applies_to?: Partial<AppliesTo> | undefined;
    steps: string[];
  },
): Promise<Runbook> {
  const applies = normalize(input.applies_to);
  return db.transaction().execute(async (tx) => {
    const row = await insertRunbook(tx, {
      tenant_id: auth.tenant.id,
      title: input.title,
      service: input.service ?? null,
      applies_to: JSON.stringify(applies),
      steps: JSON.stringify(input.steps),
      created_by: `user:${auth.user.email}`,
    });
    await appendAudit(tx, auth.tenant.id, {
      actor: {
        type: 'user',
        id: auth.user.id,
        email: auth.user.email,
        token_id: auth.kind === 'token' ? auth.token.id : null,
      },
      action: 'runbook.created',
      target_type: 'runbook',
      target_id: row.id,
      details: { title: row.title },
    });
    return { ...row, applies_to: normalize(row.applies_to), source: 'tenant' as const };
  });
}

export interface RunbookSubject {
  /** The detector (check id) of a finding. */
  checkId?: string | undefined;
  /** Resource types involved. */
  resourceTypes?: string[] | undefined;
  /** An alert's fingerprint. */
  alertFingerprint?: string | undefined;
  /** The service (tag service=) involved. */
  services?: string[] | undefined;
}

/**
 * Runbooks that apply to a subject, best first. Score: a detector or alert fingerprint named in
 * applies_to 4, a resource type 2, and 3 more for a runbook written for the subject's service (the most
 * specific advice); a tenant runbook wins a tie over a built-in one (the team's own words come first).
 * A service-specific runbook applies only to that service.
 */
export async function matchRunbooks(db: Db, tenantId: string, subject: RunbookSubject): Promise<Runbook[]> {
  const services = (subject.services ?? []).map((s) => s.toLowerCase());
  const scored = (await listRunbooks(db, tenantId))
    .map((r) => {
      if (r.service && !services.includes(r.service.toLowerCase())) return { r, score: 0 };
      let score = 0;
      if (subject.checkId && r.applies_to.detectors.includes(subject.checkId)) score += 4;
      if (subject.alertFingerprint && r.applies_to.alert_fingerprints.includes(subject.alertFingerprint))
        score += 4;
      if ((subject.resourceTypes ?? []).some((t) => r.applies_to.resource_types.includes(t))) score += 2;
      if (score > 0 && r.service) score += 3;
      return { r, score };
    })
    .filter((x) => x.score > 0);
  scored.sort(
    (a, b) => b.score - a.score || Number(b.r.source === 'tenant') - Number(a.r.source === 'tenant'),
  );
  return scored.map((x) => x.r);
}

/**
 * The runbook for a finding: its detector, its resources' types and their service tags, matched as
 * matchRunbooks does; undefined when none applies. For resolution plans (issue 12): a plan's steps can
 * start from `runbook.steps`. 404 for an id of another tenant.
 */
export async function runbookForFinding(
  db: Db,
  tenantId: string,
  findingId: string,
): Promise<Runbook | undefined> {
  return (await runbooksForFinding(db, tenantId, findingId))[0];
}

/** Every runbook that applies to a finding, best first. */
export async function runbooksForFinding(db: Db, tenantId: string, findingId: string): Promise<Runbook[]> {
  if (!/^[0-9a-f-]{36}$/i.test(findingId)) throw new NotFound('No such finding.');
  const f = await findFindingCheck(db, tenantId, findingId);
  if (!f) throw new NotFound('No such finding.');
  const resources = await findFindingResourceServices(db, f.id);
  const matched = await matchRunbooks(db, tenantId, {
    checkId: f.check_id,
    resourceTypes: resources.rows.map((r) => r.type),
    services: resources.rows.map((r) => r.service).filter((s): s is string => Boolean(s)),
  });
  // Runbooks written for the finding's detector (or by the team) come alone when there are any: a
  // built-in runbook that only shares a resource type is advice for another problem.
  const direct = matched.filter((r) => r.source === 'tenant' || r.applies_to.detectors.includes(f.check_id));
  return direct.length ? direct : matched;
}
