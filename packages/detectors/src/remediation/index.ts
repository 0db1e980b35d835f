import { describeCommand, type Expect, type RuleRef, type StepCheck } from './checks';

export * from './checks';

/**
 * Remediation knowledge, per detector, in one place beside the detectors: the steps that fix what a
 * detector finds, exact for the finding's resources (real ids, region, the AWS CLI command and flags
 * that `demo exec` also applies), each with a read-only check and its "done when", or guidance to
 * confirm by hand where no command or check exists. The platform's final check (re-running the
 * detection) is added by the plan service, not here.
 */

/** A resource of the finding, with its current attributes from the inventory (null when deleted). */
export interface PlanResource {
  arn: string;
  type: string;
  native_id: string;
  name: string | null;
  region: string;
  account_id: string;
  attributes: Record<string, unknown> | null;
  tags?: Record<string, string>;
  action_type: string;
  savings: number;
}

export interface RemediationInput {
  findingId: string;
  checkId: string;
  title: string;
  resources: PlanResource[];
  /** The finding's evidence step in its audit trail (`audit:<seq>`), cited by every step. */
  evidenceRef: string | null;
  recommendation: { rationale: string; action_type: string; savings: number } | null;
}

export interface Citation {
  kind: 'finding' | 'evidence' | 'resource' | 'learning' | 'runbook';
  ref: string;
}

export interface StepDraft {
  title: string;
  instructions: string;
  citations: Citation[];
  fix_command: string | null;
  verification: { command: string; done_when: string } | null;
  check: StepCheck | null;
  how_to_confirm: string | null;
}

/** Steps before the platform's final check: a plan has at most 8 in all. */
export const MAX_REMEDIATION_STEPS = 7;

const rg = (r: PlanResource) => (r.region && r.region !== 'global' ? ` --region ${r.region}` : '');
const attr = (r: PlanResource, key: string): unknown => (r.attributes ?? {})[key];
const nameOf = (r: PlanResource) =>
  r.name && r.name !== r.native_id ? `${r.native_id} (${r.name})` : r.native_id;

function cite(input: RemediationInput, ...resources: PlanResource[]): Citation[] {
  return [
    { kind: 'finding', ref: input.findingId },
    ...(input.evidenceRef ? [{ kind: 'evidence' as const, ref: input.evidenceRef }] : []),
    ...resources.map((r) => ({ kind: 'resource' as const, ref: r.arn })),
  ];
}

interface StepSpec {
  title: string;
  text: string;
  r: PlanResource;
  fix?: string;
  expect?: Expect;
  /** `--query` of the describe call shown to the user. */
  query?: string;
  doneWhen?: string;
  confirm?: string;
  /** The finding's resource to cite, when the check is on another (an alarm still to be created). */
  about?: PlanResource;
}

function step(input: RemediationInput, s: StepSpec): StepDraft {
  const check: StepCheck | null = s.expect
    ? { arn: s.r.arn, type: s.r.type, native_id: s.r.native_id, region: s.r.region, expect: s.expect }
    : null;
  return {
    title: s.title,
    instructions: s.text,
    citations: cite(input, s.about ?? s.r),
    fix_command: s.fix ?? null,
    verification: check ? { command: describeCommand(s.r, s.query), done_when: s.doneWhen ?? '' } : null,
    check,
    how_to_confirm: check
      ? null
      : (s.confirm ?? 'Confirm by hand once done; the final check re-runs the detection.'),
  };
}

const gone = (what: string, code: string) => `The call fails with ${code}: the ${what} no longer exists.`;

/** One step per resource of the types given, at most `max`, the rest named in one closing step. */
function perResource(
  input: RemediationInput,
  types: string[],
  make: (r: PlanResource) => StepDraft,
  max = MAX_REMEDIATION_STEPS,
): StepDraft[] {
  const rs = input.resources.filter((r) => types.includes(r.type) && r.attributes);
  const steps = rs.slice(0, rs.length > max ? max - 1 : max).map(make);
  const rest = rs.slice(steps.length);
  if (rest.length) {
    const commands = rest.map((r) => make(r).fix_command).filter(Boolean);
    steps.push({
      title: `The other ${rest.length} resources`,
      instructions: `Apply the same change to ${rest.map(nameOf).join(', ')}${commands.length ? `: ${commands.join(' ; ')}` : ''}.`,
      citations: cite(input, ...rest),
      fix_command: null,
      verification: null,
      check: null,
      how_to_confirm: `Run the describe call of each (as in the steps above); the final check re-runs the detection over all ${rs.length}.`,
    });
  }
  return steps;
}

function ruleOf(raw: Record<string, unknown>): RuleRef {
  return {
    ip_protocol: String(raw.ip_protocol),
    from_port: raw.from_port === null || raw.from_port === undefined ? null : Number(raw.from_port),
    to_port: raw.to_port === null || raw.to_port === undefined ? null : Number(raw.to_port),
    cidr_ipv4: (raw.cidr_ipv4 as string | null) ?? null,
    cidr_ipv6: (raw.cidr_ipv6 as string | null) ?? null,
  };
}

function permissionJson(rule: RuleRef): string {
  return JSON.stringify([
    {
      IpProtocol: rule.ip_protocol,
      ...(rule.ip_protocol === '-1' ? {} : { FromPort: rule.from_port, ToPort: rule.to_port }),
      ...(rule.cidr_ipv4 ? { IpRanges: [{ CidrIp: rule.cidr_ipv4 }] } : {}),
      ...(rule.cidr_ipv6 ? { Ipv6Ranges: [{ CidrIpv6: rule.cidr_ipv6 }] } : {}),
    },
  ]);
}

const ruleText = (r: RuleRef) =>
  `${r.ip_protocol === '-1' ? 'all traffic' : `${r.ip_protocol} ${r.from_port === r.to_port ? r.from_port : `${r.from_port}-${r.to_port}`}`} from ${r.cidr_ipv4 ?? r.cidr_ipv6}`;

/** The Internet ingress rules of a group that match a port test (null: every rule from the Internet). */
function openRules(sg: PlanResource, covers: ((rule: RuleRef) => boolean) | null): RuleRef[] {
  const rules = ((sg.attributes?.rules as Array<Record<string, unknown>> | undefined) ?? [])
    .filter((x) => x.type === 'ingress' && (x.cidr_ipv4 === '0.0.0.0/0' || x.cidr_ipv6 === '::/0'))
    .map(ruleOf);
  return covers ? rules.filter(covers) : rules;
}

const coversPort = (port: number) => (r: RuleRef) =>
  r.ip_protocol === '-1' ||
  (['tcp', '6'].includes(r.ip_protocol) && (r.from_port ?? 0) <= port && (r.to_port ?? 65535) >= port);
const coversAll = (r: RuleRef) =>
  r.ip_protocol === '-1' ||
  (['tcp', 'udp', '6', '17'].includes(r.ip_protocol) && (r.from_port ?? 0) <= 0 && (r.to_port ?? 0) >= 65535);

function revokeSteps(input: RemediationInput, sg: PlanResource, rules: RuleRef[], why: string): StepDraft[] {
  return rules.map((rule) =>
    step(input, {
      title: `Remove ${ruleText(rule)} from ${sg.native_id}`,
      text: `The evidence shows security group ${nameOf(sg)} admits ${ruleText(rule)}. ${why} First add a narrower rule if someone needs the access (your VPN or office CIDR), then revoke the open one: the change applies at once to every instance that uses the group.`,
      r: sg,
      fix: `aws ec2 revoke-security-group-ingress --group-id ${sg.native_id} --ip-permissions '${permissionJson(rule)}'${rg(sg)}`,
      expect: { kind: 'no_rule', rule },
      query: 'SecurityGroups[0].IpPermissions',
      doneWhen: `No ingress permission of ${sg.native_id} has ${ruleText(rule)}.`,
    }),
  );
}

function sgRemediation(covers: ((rule: RuleRef) => boolean) | null, why: string) {
  return (input: RemediationInput): StepDraft[] => {
    const sg = input.resources.find((r) => r.type === 'aws_vpc_security_group' && r.attributes);
    if (!sg) return [];
    return revokeSteps(input, sg, openRules(sg, covers), why).slice(0, MAX_REMEDIATION_STEPS);
  };
}

function snapshotFirst(input: RemediationInput, r: PlanResource, what: string): StepDraft {
  return step(input, {
    title: `Keep a copy of ${r.native_id} if anyone may need it`,
    text: `Before deleting ${what} ${nameOf(r)}, ask its owner${r.tags?.owner ? ` (${r.tags.owner})` : r.tags?.team ? ` (team ${r.tags.team})` : ''} whether the data is still needed; if so, take a snapshot in the console or with the AWS CLI and wait until it is completed.`,
    r,
    confirm: 'Confirm once the owner agreed or the snapshot is completed.',
  });
}

function rdsModify(
  input: RemediationInput,
  r: PlanResource,
  flag: string,
  expect: Expect,
  title: string,
  text: string,
  query: string,
  doneWhen: string,
): StepDraft {
  return step(input, {
    title,
    text,
    r,
    fix: `aws rds modify-db-instance --db-instance-identifier ${r.native_id} ${flag} --apply-immediately${rg(r)}`,
    expect,
    query,
    doneWhen,
  });
}

function stopResizeStart(input: RemediationInput, r: PlanResource, target: string, why: string): StepDraft[] {
  return [
    step(input, {
      title: `Stop ${r.native_id} in a maintenance window`,
      text: `${why} The instance type can only change while the instance is stopped: agree a window with the owners of ${nameOf(r)}, then stop it.`,
      r,
      fix: `aws ec2 stop-instances --instance-ids ${r.native_id}${rg(r)}`,
      expect: { kind: 'equals', path: 'instance_state', value: 'stopped' },
      query: 'Reservations[0].Instances[0].State.Name',
      doneWhen: 'The state is "stopped".',
    }),
    step(input, {
      title: `Change ${r.native_id} to ${target}`,
      text: `Change the instance type of ${nameOf(r)} from ${String(attr(r, 'instance_type'))} to ${target}.`,
      r,
      fix: `aws ec2 modify-instance-attribute --instance-id ${r.native_id} --instance-type Value=${target}${rg(r)}`,
      expect: { kind: 'equals', path: 'instance_type', value: target },
      query: 'Reservations[0].Instances[0].InstanceType',
      doneWhen: `The instance type is "${target}".`,
    }),
    step(input, {
      title: `Start ${r.native_id} again`,
      text: `Start ${nameOf(r)} and check that its service answers.`,
      r,
      fix: `aws ec2 start-instances --instance-ids ${r.native_id}${rg(r)}`,
      expect: { kind: 'equals', path: 'instance_state', value: 'running' },
      query: 'Reservations[0].Instances[0].State.Name',
      doneWhen: 'The state is "running".',
    }),
  ];
}

/** A smaller instance type of the same family (one size down), or null when there is none. */
function oneSizeDown(type: string): string | null {
  const sizes = [
    'nano',
    'micro',
    'small',
    'medium',
    'large',
    'xlarge',
    '2xlarge',
    '4xlarge',
    '8xlarge',
    '12xlarge',
    '16xlarge',
    '24xlarge',
  ];
  const [family, size] = type.split('.');
  const i = sizes.indexOf(size ?? '');
  return family && i > 0 ? `${family}.${sizes[i - 1]}` : null;
}

const PREVIOUS_GEN: Record<string, string> = {
  t2: 't3',
  m4: 'm5',
  c4: 'c5',
  r4: 'r5',
  m3: 'm5',
  c3: 'c5',
  r3: 'r5',
  t1: 't3',
  m1: 'm5',
};
function modernType(type: string): string | null {
  const [family, size] = type.split('.');
  const next = PREVIOUS_GEN[family ?? ''];
  return next && size ? `${next}.${size}` : null;
}
function modernDbClass(cls: string): string | null {
  const m = /^db\.([a-z0-9]+)\.(.+)$/.exec(cls);
  const next = m ? PREVIOUS_GEN[m[1]!] : undefined;
  return m && next ? `db.${next}.${m[2]}` : null;
}

type Remedy = (input: RemediationInput) => StepDraft[];

const ebsDelete: Remedy = (input) => {
  const vols = input.resources.filter((r) => r.type === 'aws_ebs_volume' && r.attributes);
  const first = vols[0];
  return [
    ...(first ? [snapshotFirst(input, first, 'volume')] : []),
    ...perResource(
      input,
      ['aws_ebs_volume'],
      (r) =>
        step(input, {
          title: `Delete volume ${r.native_id}`,
          text: `The evidence shows ${nameOf(r)}, ${String(attr(r, 'size'))} GiB ${String(attr(r, 'volume_type'))}, is attached to no instance and costs $${r.savings.toFixed(2)} a month. Delete it.`,
          r,
          fix: `aws ec2 delete-volume --volume-id ${r.native_id}${rg(r)}`,
          expect: { kind: 'absent' },
          doneWhen: gone('volume', 'InvalidVolume.NotFound'),
        }),
      MAX_REMEDIATION_STEPS - 1,
    ),
  ];
};

const volumeToGp3: Remedy = (input) =>
  perResource(input, ['aws_ebs_volume'], (r) =>
    step(input, {
      title: `Change ${r.native_id} to gp3`,
      text: `The evidence shows ${nameOf(r)} is ${String(attr(r, 'volume_type'))}; gp3 gives at least the same baseline (3000 IOPS, 125 MiB/s) for less, saving $${r.savings.toFixed(2)} a month. The change is online: no detach, no downtime.`,
      r,
      fix: `aws ec2 modify-volume --volume-id ${r.native_id} --volume-type gp3${rg(r)}`,
      expect: { kind: 'equals', path: 'volume_type', value: 'gp3' },
      query: 'Volumes[0].VolumeType',
      doneWhen: 'The volume type is "gp3".',
    }),
  );

const REMEDIES: Record<string, Remedy> = {
  'finops.ebs_unattached': ebsDelete,
  'finops.ebs_on_stopped_instances': (input) => {
    const inst = input.resources.find((r) => r.type === 'aws_ec2_instance' && r.attributes);
    const vols = input.resources.filter((r) => r.type === 'aws_ebs_volume' && r.attributes);
    const target = inst ?? vols[0];
    if (!target) return [];
    if (!inst)
      return vols.slice(0, MAX_REMEDIATION_STEPS).map((v) =>
        step(input, {
          title: `Snapshot and delete ${v.native_id}, or terminate its stopped instance`,
          text: `The evidence shows ${nameOf(v)} is attached to a stopped instance and billed $${v.savings.toFixed(2)} a month. Snapshot it, then terminate the instance it belongs to (volumes with DeleteOnTermination go with it) or detach and delete it.`,
          r: v,
          expect: { kind: 'absent' },
          doneWhen: gone('volume', 'InvalidVolume.NotFound'),
        }),
      );
    return [
      snapshotFirst(input, inst, 'the instance and its volumes'),
      step(input, {
        title: `Terminate stopped instance ${inst.native_id}`,
        text: `The evidence shows ${nameOf(inst)} has been stopped while its volumes are still billed. Terminate it once its data is kept.`,
        r: inst,
        fix: `aws ec2 terminate-instances --instance-ids ${inst.native_id}${rg(inst)}`,
        expect: { kind: 'absent' },
        doneWhen: gone('instance', 'InvalidInstanceID.NotFound'),
      }),
    ];
  },
  'finops.ebs_gp2_to_gp3': volumeToGp3,
  'finops.ebs_io_to_gp3': volumeToGp3,
  'finops.ebs_snapshot_old': (input) =>
    perResource(input, ['aws_ebs_snapshot'], (r) =>
      step(input, {
        title: `Delete snapshot ${r.native_id}`,
        text: `The evidence shows ${nameOf(r)} is older than 90 days and costs $${r.savings.toFixed(2)} a month. Check that no AMI or restore plan needs it, then delete it.`,
        r,
        fix: `aws ec2 delete-snapshot --snapshot-id ${r.native_id}${rg(r)}`,
        expect: { kind: 'absent' },
        doneWhen: gone('snapshot', 'InvalidSnapshot.NotFound'),
      }),
    ),
  'finops.eip_unassociated': (input) =>
    perResource(input, ['aws_vpc_eip'], (r) =>
      step(input, {
        title: `Release Elastic IP ${String(attr(r, 'public_ip') ?? r.native_id)}`,
        text: `The evidence shows ${nameOf(r)} is associated with nothing and billed by the hour. Make sure no DNS record or allow-list still names ${String(attr(r, 'public_ip'))}, then release it.`,
        r,
        fix: `aws ec2 release-address --allocation-id ${r.native_id}${rg(r)}`,
        expect: { kind: 'absent' },
        doneWhen: gone('address', 'InvalidAllocationID.NotFound'),
      }),
    ),
  'finops.ec2_low_cpu': (input) => {
    const r = input.resources.find((x) => x.type === 'aws_ec2_instance' && x.attributes);
    const target = r ? oneSizeDown(String(attr(r, 'instance_type'))) : null;
    if (!r || !target) return [];
    return stopResizeStart(
      input,
      r,
      target,
      `The evidence shows ${nameOf(r)} (${String(attr(r, 'instance_type'))}) used little CPU for 30 days: one size down (${target}) halves its cost.`,
    );
  },
  'finops.ec2_previous_generation': (input) => {
    const inst = input.resources.find((x) => x.type === 'aws_ec2_instance' && x.attributes);
    if (inst) {
      const target = modernType(String(attr(inst, 'instance_type')));
      if (target)
        return stopResizeStart(
          input,
          inst,
          target,
          `The evidence shows ${nameOf(inst)} runs a previous-generation type; ${target} is faster and cheaper.`,
        );
    }
    const db = input.resources.find((x) => x.type === 'aws_rds_db_instance' && x.attributes);
    const cls = db ? modernDbClass(String(attr(db, 'class'))) : null;
    if (!db || !cls) return [];
    return [
      rdsModify(
        input,
        db,
        `--db-instance-class ${cls}`,
        { kind: 'equals', path: 'class', value: cls },
        `Move ${db.native_id} to ${cls}`,
        `The evidence shows ${nameOf(db)} runs previous-generation class ${String(attr(db, 'class'))}. Modify it to ${cls} (a short restart; Multi-AZ instances fail over instead).`,
        'DBInstances[0].DBInstanceClass',
        `The class is "${cls}".`,
      ),
    ];
  },
  'finops.ec2_stopped_long': (input) => {
    const inst = input.resources.find((r) => r.type === 'aws_ec2_instance' && r.attributes);
    if (!inst) return [];
    const eips = input.resources.filter((r) => r.type === 'aws_vpc_eip' && r.attributes);
    return [
      snapshotFirst(input, inst, 'the instance'),
      step(input, {
        title: `Terminate ${inst.native_id}`,
        text: `The evidence shows ${nameOf(inst)} has been stopped for a long time while its volumes${eips.length ? ' and addresses' : ''} are still billed. Terminate it once its data is kept (an AMI or snapshots).`,
        r: inst,
        fix: `aws ec2 terminate-instances --instance-ids ${inst.native_id}${rg(inst)}`,
        expect: { kind: 'absent' },
        doneWhen: gone('instance', 'InvalidInstanceID.NotFound'),
      }),
      ...eips.slice(0, 4).map((e) =>
        step(input, {
          title: `Release Elastic IP ${String(attr(e, 'public_ip') ?? e.native_id)}`,
          text: `After the instance is gone, ${nameOf(e)} is associated with nothing; release it.`,
          r: e,
          fix: `aws ec2 release-address --allocation-id ${e.native_id}${rg(e)}`,
          expect: { kind: 'absent' },
          doneWhen: gone('address', 'InvalidAllocationID.NotFound'),
        }),
      ),
    ];
  },
  'finops.elb_idle': (input) =>
    perResource(input, ['aws_ec2_application_load_balancer'], (r) =>
      step(input, {
        title: `Delete idle load balancer ${r.native_id}`,
        text: `The evidence shows ${nameOf(r)} served no request or has no healthy target for 30 days. Check that no DNS record points at ${String(attr(r, 'dns_name') ?? r.native_id)}, then delete it${(attr(r, 'load_balancer_attributes') as { deletion_protection_enabled?: boolean } | undefined)?.deletion_protection_enabled ? ' (turn deletion protection off first: aws elbv2 modify-load-balancer-attributes --attributes Key=deletion_protection.enabled,Value=false)' : ''}.`,
        r,
        fix: `aws elbv2 delete-load-balancer --load-balancer-arn ${r.arn}${rg(r)}`,
        expect: { kind: 'absent' },
        doneWhen: gone('load balancer', 'LoadBalancerNotFound'),
      }),
    ),
  'finops.nat_unused': (input) =>
    perResource(input, ['aws_vpc_nat_gateway'], (r) =>
      step(input, {
        title: `Delete unused NAT gateway ${r.native_id}`,
        text: `The evidence shows ${nameOf(r)} sent no traffic in the window but is billed by the hour. Check that no route table still needs it, delete it, then release its Elastic IP.`,
        r,
        fix: `aws ec2 delete-nat-gateway --nat-gateway-id ${r.native_id}${rg(r)}`,
        expect: { kind: 'absent' },
        doneWhen: gone('NAT gateway', 'NatGatewayNotFound'),
      }),
    ),
  'finops.rds_idle': (input) =>
    input.resources
      .filter((r) => r.type === 'aws_rds_db_instance' && r.attributes)
      .slice(0, 3)
      .flatMap((r) => [
        ...(attr(r, 'deletion_protection')
          ? [
              rdsModify(
                input,
                r,
                '--no-deletion-protection',
                { kind: 'equals', path: 'deletion_protection', value: false },
                `Turn off deletion protection on ${r.native_id}`,
                `The evidence shows ${nameOf(r)} had no connections for the whole window; it is protected against deletion, so turn that off first, on purpose.`,
                'DBInstances[0].DeletionProtection',
                'DeletionProtection is false.',
              ),
            ]
          : []),
        step(input, {
          title: `Delete idle database ${r.native_id}, keeping a final snapshot`,
          text: `The evidence shows ${nameOf(r)} had no connections for the whole window and costs $${r.savings.toFixed(2)} a month. Delete it with a final snapshot, so it can be restored if someone asks.`,
          r,
          fix: `aws rds delete-db-instance --db-instance-identifier ${r.native_id} --final-db-snapshot-identifier ${r.native_id}-final${rg(r)}`,
          expect: { kind: 'absent' },
          doneWhen: gone('DB instance', 'DBInstanceNotFound'),
        }),
      ]),
  'finops.rds_snapshot_orphaned': (input) =>
    perResource(input, ['aws_rds_db_snapshot'], (r) =>
      step(input, {
        title: `Delete orphaned DB snapshot ${r.native_id}`,
        text: `The evidence shows ${nameOf(r)} belongs to a database that no longer exists and is old. Check retention rules (legal, audit), then delete it.`,
        r,
        fix: `aws rds delete-db-snapshot --db-snapshot-identifier ${r.native_id}${rg(r)}`,
        expect: { kind: 'absent' },
        doneWhen: gone('DB snapshot', 'DBSnapshotNotFound'),
      }),
    ),
  'finops.logs_no_retention': (input) =>
    perResource(input, ['aws_cloudwatch_log_group'], (r) =>
      step(input, {
        title: `Set a retention on ${r.native_id}`,
        text: `The evidence shows log group ${nameOf(r)} keeps its logs forever. Set a retention that matches your policy (30 days here; 90 or 365 where audits need it).`,
        r,
        fix: `aws logs put-retention-policy --log-group-name ${r.native_id} --retention-in-days 30${rg(r)}`,
        expect: { kind: 'at_least', path: 'retention_in_days', value: 1 },
        query: 'logGroups[0].retentionInDays',
        doneWhen: 'retentionInDays is set (30).',
      }),
    ),
  'security.sg_all_ports_open': sgRemediation(
    coversAll,
    'Every port of every instance behind it is reachable from the Internet.',
  ),
  'security.sg_ssh_open': sgRemediation(
    coversPort(22),
    'SSH open to the Internet is scanned within minutes.',
  ),
  'security.sg_rdp_open': sgRemediation(
    coversPort(3389),
    'RDP open to the Internet is a common ransomware entry.',
  ),
  'security.s3_public': (input) =>
    perResource(input, ['aws_s3_bucket'], (r) =>
      step(input, {
        title: `Block public access on bucket ${r.native_id}`,
        text: `The evidence shows bucket ${nameOf(r)} is readable by anyone (a public ACL grant or policy, not blocked). Check that no website or customer download relies on it, then turn on all four public-access-block settings.`,
        r,
        fix: `aws s3api put-public-access-block --bucket ${r.native_id} --public-access-block-configuration BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true`,
        expect: { kind: 'equals', path: 'restrict_public_buckets', value: true },
        query: 'PublicAccessBlockConfiguration',
        doneWhen: 'All four settings are true (IgnorePublicAcls and RestrictPublicBuckets in particular).',
      }),
    ),
  'security.ebs_unencrypted': (input) =>
    perResource(input, ['aws_ebs_volume'], (r) =>
      step(input, {
        title: `Replace ${r.native_id} with an encrypted copy`,
        text: `The evidence shows ${nameOf(r)} is not encrypted. EBS cannot encrypt a volume in place: snapshot it, copy the snapshot with --encrypted, create a volume from the copy, swap it in during a window, and delete the old one. Turn on EBS encryption by default in the region so new volumes are encrypted.`,
        r,
        confirm: 'Confirm once the encrypted volume is in use and the old one is deleted.',
      }),
    ),
  'security.iam_access_key_old': (input) =>
    perResource(input, ['aws_iam_access_key'], (r) =>
      step(input, {
        title: `Rotate access key ${r.native_id}`,
        text: `The evidence shows access key ${r.native_id} of ${String(attr(r, 'user_name'))} is active and older than the rotation limit. Create a new key, move its users to it, then deactivate the old one (delete it a few days later).`,
        r,
        fix: `aws iam update-access-key --access-key-id ${r.native_id} --status Inactive --user-name ${String(attr(r, 'user_name'))}`,
        expect: { kind: 'not_equals', path: 'status', value: 'Active' },
        query: `AccessKeyMetadata[?AccessKeyId=='${r.native_id}'].Status`,
        doneWhen: 'The key is "Inactive" (or gone).',
      }),
    ),
  'security.root_mfa_disabled': (input) => {
    const r = input.resources[0];
    return r
      ? [
          step(input, {
            title: 'Turn on MFA for the root user',
            text: `The evidence shows the root user of account ${r.account_id} has no MFA. Sign in as root, open Security credentials, and assign a hardware or virtual MFA device; keep the device in a safe.`,
            r,
            confirm: 'Confirm once the account summary shows AccountMFAEnabled = 1.',
          }),
        ]
      : [];
  },
  'security.iam_console_user_no_mfa': (input) =>
    perResource(input, ['aws_iam_user'], (r) =>
      step(input, {
        title: `Require MFA for ${r.native_id}`,
        text: `The evidence shows IAM user ${nameOf(r)} can sign in to the console without MFA. Ask the user to register an MFA device (IAM > Users > Security credentials), or remove the console password if it is not used.`,
        r,
        confirm: `Confirm once aws iam list-mfa-devices --user-name ${r.native_id} lists a device.`,
      }),
    ),
  'security.rds_public': (input) => {
    const db = input.resources.find((r) => r.type === 'aws_rds_db_instance' && r.attributes);
    if (!db) return [];
    return [
      rdsModify(
        input,
        db,
        '--no-publicly-accessible',
        { kind: 'equals', path: 'publicly_accessible', value: false },
        `Make ${db.native_id} private`,
        `The evidence shows ${nameOf(db)} is publicly accessible. Turn that off; clients inside the VPC keep their access.`,
        'DBInstances[0].PubliclyAccessible',
        'PubliclyAccessible is false.',
      ),
      ...input.resources
        .filter((r) => r.type === 'aws_vpc_security_group' && r.attributes)
        .flatMap((sg) =>
          revokeSteps(
            input,
            sg,
            openRules(sg, null),
            'The database port is reachable from the Internet through it.',
          ),
        ),
    ].slice(0, MAX_REMEDIATION_STEPS);
  },
  'security.rds_unencrypted': (input) =>
    perResource(input, ['aws_rds_db_instance'], (r) =>
      step(input, {
        title: `Move ${r.native_id} to encrypted storage`,
        text: `The evidence shows ${nameOf(r)} stores its data unencrypted. RDS cannot encrypt in place: snapshot it, copy the snapshot with a KMS key, restore a new instance from the copy, switch the application over, then delete the old instance.`,
        r,
        confirm: 'Confirm once the application uses the encrypted instance and the old one is gone.',
      }),
    ),
  'security.cloudtrail_no_multi_region': (input) => {
    const trails = input.resources.filter((r) => r.type === 'aws_cloudtrail_trail' && r.attributes);
    if (trails.length)
      return trails.slice(0, MAX_REMEDIATION_STEPS).map((t) =>
        step(input, {
          title: `Make trail ${t.native_id} multi-region`,
          text: `The evidence shows no logging multi-region trail covers account ${t.account_id}; ${nameOf(t)} records one region only. Make it multi-region so activity in every region is logged.`,
          r: t,
          fix: `aws cloudtrail update-trail --name ${t.native_id} --is-multi-region-trail${rg(t)}`,
          expect: { kind: 'equals', path: 'is_multi_region_trail', value: true },
          query: 'trailList[0].IsMultiRegionTrail',
          doneWhen: 'IsMultiRegionTrail is true.',
        }),
      );
    const acct = input.resources[0];
    return acct
      ? [
          step(input, {
            title: 'Create a multi-region trail',
            text: `The evidence shows account ${acct.account_id} has no trail at all. Create a multi-region trail logging to a protected S3 bucket (aws cloudtrail create-trail --is-multi-region-trail, then start-logging).`,
            r: acct,
            confirm:
              'Confirm once aws cloudtrail describe-trails lists a multi-region trail that is logging.',
          }),
        ]
      : [];
  },
  'security.ec2_imdsv1': (input) =>
    perResource(input, ['aws_ec2_instance'], (r) =>
      step(input, {
        title: `Require IMDSv2 on ${r.native_id}`,
        text: `The evidence shows ${nameOf(r)} accepts IMDSv1 (http_tokens optional), which SSRF can use to steal its role's credentials. Check that its SDKs are recent (all current ones use IMDSv2), then require tokens.`,
        r,
        fix: `aws ec2 modify-instance-metadata-options --instance-id ${r.native_id} --http-tokens required --http-endpoint enabled${rg(r)}`,
        expect: { kind: 'equals', path: 'metadata_options.http_tokens', value: 'required' },
        query: 'Reservations[0].Instances[0].MetadataOptions.HttpTokens',
        doneWhen: 'HttpTokens is "required".',
      }),
    ),
  'security.iam_admin_star': (input) =>
    perResource(input, ['aws_iam_policy', 'aws_iam_role', 'aws_iam_user'], (r) =>
      step(input, {
        title: `Replace the Action "*" grant in ${r.native_id}`,
        text: `The evidence shows ${nameOf(r)} allows every action on every resource. Use IAM Access Analyzer's policy generation (from CloudTrail) to list what it really uses, publish a new policy version with only that, and set it as default.`,
        r,
        confirm: 'Confirm once the default policy version no longer allows Action "*" on Resource "*".',
      }),
    ),
  'security.toxic_exposed_instance_sensitive_data': (input) => {
    const steps: StepDraft[] = [];
    for (const sg of input.resources.filter((r) => r.type === 'aws_vpc_security_group' && r.attributes))
      steps.push(
        ...revokeSteps(
          input,
          sg,
          openRules(sg, null),
          'It is the Internet leg of the attack path to sensitive data.',
        ),
      );
    for (const b of input.resources.filter((r) => r.type === 'aws_s3_bucket' && r.attributes))
      steps.push(...REMEDIES['security.s3_public']!({ ...input, resources: [b] }));
    for (const role of input.resources.filter((r) => r.type === 'aws_iam_role' && r.attributes))
      steps.push(
        step(input, {
          title: `Narrow role ${role.native_id}`,
          text: `The evidence shows the exposed instance's role ${nameOf(role)} can read sensitive data. Limit it to the buckets and actions the workload needs.`,
          r: role,
          confirm: 'Confirm once the role no longer grants read access to the sensitive buckets.',
        }),
      );
    return steps.slice(0, MAX_REMEDIATION_STEPS);
  },
  'sre.rds_single_az': (input) =>
    perResource(input, ['aws_rds_db_instance'], (r) =>
      rdsModify(
        input,
        r,
        '--multi-az',
        { kind: 'equals', path: 'multi_az', value: true },
        `Enable Multi-AZ on ${r.native_id}`,
        `The evidence shows ${nameOf(r)} runs in one AZ: an AZ outage or a host failure takes it down until it is rebuilt. Multi-AZ adds a synchronous standby (billed like the primary); the conversion runs online.`,
        'DBInstances[0].MultiAZ',
        'MultiAZ is true.',
      ),
    ),
  'sre.rds_no_backups': (input) =>
    perResource(input, ['aws_rds_db_instance'], (r) =>
      rdsModify(
        input,
        r,
        '--backup-retention-period 7',
        { kind: 'at_least', path: 'backup_retention_period', value: 1 },
        `Turn on automated backups for ${r.native_id}`,
        `The evidence shows ${nameOf(r)} has backup_retention_period = ${String(attr(r, 'backup_retention_period'))}: no point-in-time restore. Set 7 days; RDS takes a first snapshot right away.`,
        'DBInstances[0].BackupRetentionPeriod',
        'BackupRetentionPeriod is 7 (at least 1).',
      ),
    ),
  'sre.rds_no_deletion_protection': (input) =>
    perResource(input, ['aws_rds_db_instance'], (r) =>
      rdsModify(
        input,
        r,
        '--deletion-protection',
        { kind: 'equals', path: 'deletion_protection', value: true },
        `Turn on deletion protection for ${r.native_id}`,
        `The evidence shows ${nameOf(r)} can be deleted by one call. Deletion protection costs nothing and changes nothing at runtime.`,
        'DBInstances[0].DeletionProtection',
        'DeletionProtection is true.',
      ),
    ),
  'sre.alarm_no_actions': (input) =>
    perResource(input, ['aws_cloudwatch_alarm'], (r) => {
      const a = r.attributes ?? {};
      const dims = ((a.dimensions as Array<{ name: string; value: string }> | undefined) ?? [])
        .map((d) => `Name=${d.name},Value=${d.value}`)
        .join(' ');
      const topic = `arn:aws:sns:${r.region}:${r.account_id}:oncall-alerts`;
      return step(input, {
        title: `Make alarm ${r.native_id} notify someone`,
        text: `The evidence shows alarm ${nameOf(r)} has no actions: when it fires, nobody hears. Point it at the on-call SNS topic (${topic}, or your own), keeping its metric and threshold.`,
        r,
        fix: `aws cloudwatch put-metric-alarm --alarm-name ${r.native_id} --namespace ${String(a.namespace)} --metric-name ${String(a.metric_name)}${dims ? ` --dimensions ${dims}` : ''} --statistic ${String(a.statistic ?? 'Average')} --period ${String(a.period ?? 300)} --evaluation-periods ${String(a.evaluation_periods ?? 3)} --threshold ${String(a.threshold ?? 80)} --comparison-operator ${String(a.comparison_operator ?? 'GreaterThanThreshold')} --alarm-actions ${topic}${rg(r)}`,
        expect: { kind: 'non_empty', path: 'alarm_actions' },
        query: 'MetricAlarms[0].AlarmActions',
        doneWhen: 'AlarmActions is not empty.',
      });
    }),
  'sre.resource_no_alarm': (input) =>
    perResource(
      input,
      [
        'aws_rds_db_instance',
        'aws_ec2_instance',
        'aws_vpc_nat_gateway',
        'aws_ec2_application_load_balancer',
        'aws_ec2_autoscaling_group',
        'aws_elasticache_replication_group',
        'aws_dynamodb_table',
      ],
      (r) => {
        const watch: Record<string, [string, string, string, string, number]> = {
          aws_rds_db_instance: ['AWS/RDS', 'CPUUtilization', 'DBInstanceIdentifier', r.native_id, 80],
          aws_ec2_instance: ['AWS/EC2', 'StatusCheckFailed', 'InstanceId', r.native_id, 0],
          aws_vpc_nat_gateway: ['AWS/NATGateway', 'ErrorPortAllocation', 'NatGatewayId', r.native_id, 0],
          aws_ec2_application_load_balancer: [
            'AWS/ApplicationELB',
            'HTTPCode_ELB_5XX_Count',
            'LoadBalancer',
            r.arn.replace(/^.*:loadbalancer\//, ''),
            10,
          ],
          aws_ec2_autoscaling_group: [
            'AWS/AutoScaling',
            'GroupInServiceInstances',
            'AutoScalingGroupName',
            r.native_id,
            1,
          ],
          aws_elasticache_replication_group: [
            'AWS/ElastiCache',
            'EngineCPUUtilization',
            'ReplicationGroupId',
            r.native_id,
            80,
          ],
          aws_dynamodb_table: ['AWS/DynamoDB', 'ThrottledRequests', 'TableName', r.native_id, 0],
        };
        const [ns, metric, dim, value, threshold] = watch[r.type]!;
        const name = `${r.native_id}-${metric.toLowerCase()}`.replace(/[^A-Za-z0-9._-]/g, '-');
        const alarm: PlanResource = {
          ...r,
          type: 'aws_cloudwatch_alarm',
          native_id: name,
          arn: `arn:aws:cloudwatch:${r.region}:${r.account_id}:alarm:${name}`,
        };
        const cmp = r.type === 'aws_ec2_autoscaling_group' ? 'LessThanThreshold' : 'GreaterThanThreshold';
        return step(input, {
          title: `Add an alarm on ${metric} of ${r.native_id}`,
          text: `The evidence shows ${nameOf(r)} is critical and no CloudWatch alarm watches it. Create one on ${metric} that notifies the on-call topic.`,
          r: alarm,
          about: r,
          fix: `aws cloudwatch put-metric-alarm --alarm-name ${name} --namespace ${ns} --metric-name ${metric} --dimensions Name=${dim},Value=${value} --statistic ${metric.includes('Count') || metric.includes('Failed') || metric.includes('Throttled') || metric.includes('Error') ? 'Sum' : 'Average'} --period 300 --evaluation-periods 3 --threshold ${threshold} --comparison-operator ${cmp} --alarm-actions arn:aws:sns:${r.region}:${r.account_id}:oncall-alerts${rg(r)}`,
          expect: { kind: 'non_empty', path: 'alarm_actions' },
          query: 'MetricAlarms[0].AlarmActions',
          doneWhen: `Alarm ${name} exists and has alarm actions.`,
        });
      },
    ),
  'sre.asg_single_az': (input) =>
    perResource(input, ['aws_ec2_autoscaling_group'], (r) => {
      const rec = input.recommendation?.rationale ?? '';
      const subnets = /--vpc-zone-identifier ([a-z0-9,-]+)/.exec(rec)?.[1];
      return step(input, {
        title: `Spread ${r.native_id} over two AZs`,
        text: `The evidence shows group ${nameOf(r)} launches into one AZ only. Give it subnets in at least two AZs; it then rebalances its instances.`,
        r,
        ...(subnets && !subnets.includes('<')
          ? {
              fix: `aws autoscaling update-auto-scaling-group --auto-scaling-group-name ${r.native_id} --vpc-zone-identifier ${subnets}${rg(r)}`,
            }
          : {}),
        expect: { kind: 'at_least', path: 'availability_zones.length', value: 2 },
        query: 'AutoScalingGroups[0].AvailabilityZones',
        doneWhen: 'AvailabilityZones lists at least two zones.',
      });
    }),
  'sre.asg_capacity_one': (input) =>
    perResource(input, ['aws_ec2_autoscaling_group'], (r) =>
      step(input, {
        title: `Run at least two instances in ${r.native_id}`,
        text: `The evidence shows group ${nameOf(r)} runs one instance (min ${String(attr(r, 'min_size'))}, max ${String(attr(r, 'max_size'))}): replacing it is an outage. Raise min and desired to 2.`,
        r,
        fix: `aws autoscaling update-auto-scaling-group --auto-scaling-group-name ${r.native_id} --min-size 2 --max-size ${Math.max(Number(attr(r, 'max_size') ?? 1), 4)} --desired-capacity 2${rg(r)}`,
        expect: { kind: 'at_least', path: 'min_size', value: 2 },
        query: 'AutoScalingGroups[0].[MinSize,DesiredCapacity]',
        doneWhen: 'MinSize and DesiredCapacity are at least 2.',
      }),
    ),
  'sre.lb_single_az': (input) =>
    perResource(input, ['aws_ec2_application_load_balancer'], (r) =>
      step(input, {
        title: `Enable ${r.native_id} in a second AZ`,
        text: `The evidence shows load balancer ${nameOf(r)} is enabled in one AZ. Add a subnet of another AZ (aws elbv2 set-subnets --load-balancer-arn ${r.arn} --subnets <subnet-az-1> <subnet-az-2>) and keep targets there.`,
        r,
        confirm: `Confirm once ${describeCommand(r, 'LoadBalancers[0].AvailabilityZones')} lists two zones.`,
      }),
    ),
  'sre.elasticache_no_failover': (input) =>
    input.resources
      .filter((r) => r.type === 'aws_elasticache_replication_group' && r.attributes)
      .flatMap((r) => {
        const members = ((attr(r, 'member_clusters') as unknown[]) ?? []).length;
        const replica =
          members < 2
            ? [
                step(input, {
                  title: `Add a replica to ${r.native_id}`,
                  text: `The evidence shows ${nameOf(r)} has no replica to fail over to. Add one (billed like the primary); automatic failover needs it.`,
                  r,
                  fix: `aws elasticache increase-replica-count --replication-group-id ${r.native_id} --new-replica-count 1 --apply-immediately${rg(r)}`,
                  expect: { kind: 'at_least', path: 'member_clusters.length', value: 2 },
                  query: 'ReplicationGroups[0].MemberClusters',
                  doneWhen: 'MemberClusters lists at least two nodes.',
                }),
              ]
            : [];
        return [
          ...replica,
          step(input, {
            title: `Enable automatic failover on ${r.native_id}`,
            text: `The evidence shows ${nameOf(r)} has automatic failover off: losing its primary node is an outage. Turn it on with Multi-AZ.`,
            r,
            fix: `aws elasticache modify-replication-group --replication-group-id ${r.native_id} --automatic-failover-enabled --multi-az-enabled --apply-immediately${rg(r)}`,
            expect: { kind: 'equals', path: 'automatic_failover', value: 'enabled' },
            query: 'ReplicationGroups[0].AutomaticFailover',
            doneWhen: 'AutomaticFailover is "enabled".',
          }),
        ];
      }),
  'sre.dynamodb_no_pitr': (input) =>
    perResource(input, ['aws_dynamodb_table'], (r) =>
      step(input, {
        title: `Turn on point-in-time recovery for ${r.native_id}`,
        text: `The evidence shows table ${nameOf(r)} has PITR disabled: a bad write or delete cannot be undone. PITR keeps 35 days of continuous backups.`,
        r,
        fix: `aws dynamodb update-continuous-backups --table-name ${r.native_id} --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true${rg(r)}`,
        expect: {
          kind: 'equals',
          path: 'point_in_time_recovery_description.point_in_time_recovery_status',
          value: 'ENABLED',
        },
        query: 'ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus',
        doneWhen: 'PointInTimeRecoveryStatus is "ENABLED".',
      }),
    ),
  'sre.nat_single_for_many_azs': (input) => {
    const nat = input.resources.find((r) => r.type === 'aws_vpc_nat_gateway' && r.attributes);
    if (!nat) return [];
    return [
      step(input, {
        title: 'Add a NAT gateway in each other AZ and route each AZ to its own',
        text: `The evidence shows ${nameOf(nat)} serves subnets of several AZs: its AZ failing cuts all of them off. ${input.recommendation?.rationale ?? ''}`.trim(),
        r: nat,
        confirm: 'Confirm once every private subnet routes 0.0.0.0/0 to a NAT gateway in its own AZ.',
      }),
    ];
  },
  'sre.toxic_unprotected_public_database': (input) => {
    const db = input.resources.find((r) => r.type === 'aws_rds_db_instance' && r.attributes);
    if (!db) return [];
    return [
      rdsModify(
        input,
        db,
        '--deletion-protection',
        { kind: 'equals', path: 'deletion_protection', value: true },
        `Turn on deletion protection for ${db.native_id}`,
        `The evidence shows ${nameOf(db)} is public, unbacked and unprotected: one delete loses it for good. Protect it first (it costs nothing).`,
        'DBInstances[0].DeletionProtection',
        'DeletionProtection is true.',
      ),
      rdsModify(
        input,
        db,
        '--backup-retention-period 7',
        { kind: 'at_least', path: 'backup_retention_period', value: 1 },
        `Turn on automated backups for ${db.native_id}`,
        `Then give it 7 days of automated backups, so data can be restored.`,
        'DBInstances[0].BackupRetentionPeriod',
        'BackupRetentionPeriod is at least 1.',
      ),
      rdsModify(
        input,
        db,
        '--no-publicly-accessible',
        { kind: 'equals', path: 'publicly_accessible', value: false },
        `Make ${db.native_id} private`,
        'Last, take it off the Internet; clients in the VPC keep their access.',
        'DBInstances[0].PubliclyAccessible',
        'PubliclyAccessible is false.',
      ),
    ];
  },
};

/** The detectors whose findings have remediation knowledge (every detector should). */
export const REMEDIATED_CHECKS = Object.keys(REMEDIES);

/** The built-in steps for a finding (before the final check), or null when its detector has none. */
export function remediationSteps(input: RemediationInput): StepDraft[] | null {
  const remedy = REMEDIES[input.checkId];
  if (!remedy) return null;
  return remedy(input).slice(0, MAX_REMEDIATION_STEPS);
}
