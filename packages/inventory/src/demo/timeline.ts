import { createHash } from 'node:crypto';
import { eip } from './builders';
import type { FillerService } from './filler';
import type { Seeded } from './seeded';
import { Random } from './random';
import type { WorldBuilder } from './world';

/** The day the world was first described: backfilled snapshots start here. */
export const HISTORY_START_DAY = -7;

function fingerprint(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * Applies what happened between day -7 and the spec's day, in order: the seeded drift of the
 * reference (each with its CloudTrail event and actor), the incident storyline (alerts, five duplicates
 * with one fingerprint, and a recurrence of an incident from day -7), and from day 1 on, the daily churn
 * of a living account (autoscaling replacing instances, backup snapshots), deterministic per day.
 */
export function applyTimeline(w: WorldBuilder, s: Seeded, filler: Array<FillerService | undefined>): void {
  const { prod } = w.accounts;
  const today = w.spec.day;
  const happened = (day: number, hour: number, minute: number) => w.at(day, hour, minute) < w.observedAt;
  const alice = `arn:aws:iam::${prod}:user/alice`;
  const bob = `arn:aws:iam::${prod}:user/bob`;
  const ci = `arn:aws:sts::${prod}:assumed-role/ci-deployer/github-actions`;
  const trail = (
    day: number,
    h: number,
    m: number,
    name: string,
    actor: string,
    arns: string[],
    requestParameters: Record<string, unknown>,
    sourceIp = '198.51.100.17',
  ) =>
    w.event({
      kind: 'cloudtrail',
      at: w.iso(day, h, m),
      name,
      actor,
      sourceIp,
      arns,
      payload: { eventSource: 'ec2.amazonaws.com', requestParameters, userIdentity: { arn: actor } },
    });

  // Day -7: the earlier incident the storyline recurs from (alerts only; resolved the same night).
  const rdsCpu = fingerprint(`rds-cpu-high:${s.paymentsDb.arn}`);
  if (happened(-7, 2, 10)) {
    w.event({
      kind: 'alert',
      at: w.iso(-7, 2, 10),
      name: 'RDSCPUUtilizationHigh',
      actor: null,
      fingerprint: rdsCpu,
      severity: 'critical',
      service: 'payments',
      arns: [s.paymentsDb.arn],
      payload: {
        source: 'cloudwatch',
        status: 'resolved',
        endsAt: w.iso(-7, 3, 5),
        labels: { db: s.paymentsDb.nativeId, env: 'prod' },
      },
    });
  }

  // Day -5: a temporary migration volume is deleted.
  if (happened(-5, 10, 40)) {
    w.remove(s.tmpMigrationVolume.arn);
    trail(-5, 10, 40, 'DeleteVolume', ci, [s.tmpMigrationVolume.arn], {
      volumeId: s.tmpMigrationVolume.nativeId,
    });
  }

  // Day -3: the reporting worker is resized m5.large → m5.xlarge (and stays idle).
  if (happened(-3, 15, 5)) {
    s.reportingWorker.attributes.instance_type = 'm5.xlarge';
    s.reportingWorker.sizeValue = 4;
    trail(-3, 15, 5, 'ModifyInstanceAttribute', bob, [s.reportingWorker.arn], {
      instanceId: s.reportingWorker.nativeId,
      instanceType: { value: 'm5.xlarge' },
    });
  }

  // Day -2: a new Elastic IP that is never associated; prod RDS backups turned off (7 → 0).
  if (happened(-2, 9, 30)) {
    const addr = eip(w, prod, 'us-east-1', 'prod:eip:idle-2', -2, {
      Name: 'partner-allowlist-ip',
      env: 'prod',
    });
    trail(-2, 9, 30, 'AllocateAddress', bob, [addr.arn], { domain: 'vpc' });
  }
  if (happened(-2, 11, 15)) {
    s.paymentsDb.attributes.backup_retention_period = 0;
    w.event({
      kind: 'cloudtrail',
      at: w.iso(-2, 11, 15),
      name: 'ModifyDBInstance',
      actor: bob,
      sourceIp: '198.51.100.17',
      arns: [s.paymentsDb.arn],
      payload: {
        eventSource: 'rds.amazonaws.com',
        requestParameters: {
          dBInstanceIdentifier: s.paymentsDb.nativeId,
          backupRetentionPeriod: 0,
          applyImmediately: true,
        },
        userIdentity: { arn: bob },
      },
    });
  }

  // Day -1: alice opens RDP to the world on sg-web (a manual hotfix), then the incident.
  if (happened(-1, 14, 22)) {
    const rules = s.sgWeb.attributes.rules as Array<Record<string, unknown>>;
    rules.splice(rules.length - 1, 0, {
      type: 'ingress',
      ip_protocol: 'tcp',
      from_port: 3389,
      to_port: 3389,
      cidr_ipv4: null,
      cidr_ipv6: '::/0',
      referenced_group_id: null,
    });
    trail(
      -1,
      14,
      22,
      'AuthorizeSecurityGroupIngress',
      alice,
      [s.sgWeb.arn],
      {
        groupId: s.sgWeb.nativeId,
        ipPermissions: {
          items: [
            {
              ipProtocol: 'tcp',
              fromPort: 3389,
              toPort: 3389,
              ipv6Ranges: { items: [{ cidrIpv6: '::/0' }] },
            },
          ],
        },
      },
      '203.0.113.24',
    );
  }
  const alb5xx = fingerprint(`alb-5xx:${s.checkoutAlb.arn}`);
  const incident: Array<[number, number, string, string | null, string, string]> = [
    [21, 40, 'RDSCPUUtilizationHigh', rdsCpu, 'critical', s.paymentsDb.arn],
    [21, 42, 'RDSCPUUtilizationHigh', rdsCpu, 'critical', s.paymentsDb.arn],
    [21, 45, 'RDSCPUUtilizationHigh', rdsCpu, 'critical', s.paymentsDb.arn],
    [
      21,
      47,
      'RDSDatabaseConnectionsHigh',
      fingerprint(`rds-conn-high:${s.paymentsDb.arn}`),
      'high',
      s.paymentsDb.arn,
    ],
    [21, 50, 'RDSCPUUtilizationHigh', rdsCpu, 'critical', s.paymentsDb.arn],
    [21, 52, 'ALBHTTP5xxHigh', alb5xx, 'high', s.checkoutAlb.arn],
    [21, 55, 'RDSCPUUtilizationHigh', rdsCpu, 'critical', s.paymentsDb.arn],
    [22, 3, 'ALBHTTP5xxHigh', alb5xx, 'high', s.checkoutAlb.arn],
  ];
  for (const [h, m, name, fp, severity, arn] of incident) {
    if (!happened(-1, h, m)) continue;
    w.event({
      kind: 'alert',
      at: w.iso(-1, h, m),
      name,
      actor: null,
      fingerprint: fp,
      severity,
      service: arn === s.paymentsDb.arn ? 'payments' : 'checkout-api',
      arns: [arn],
      payload: {
        source: 'cloudwatch',
        status: 'firing',
        labels: { env: 'prod' },
        recurrence_of: name === 'RDSCPUUtilizationHigh' ? w.iso(-7, 2, 10) : null,
      },
    });
  }

  // From day 1: a living account. Each day a few stacks replace an instance, and backups take snapshots.
  for (let day = 1; day <= today; day++) {
    const r = new Random(w.spec.seed, `churn:${day}`);
    const replacements = Math.max(1, Math.round(filler.length / 50));
    for (let k = 0; k < replacements; k++) {
      const n = r.int(0, filler.length - 1);
      w.owner = n;
      replaceInstance(w, filler[n], day, r);
      w.owner = null;
    }
    const b = r.int(0, filler.length - 1);
    const backed = filler[b];
    if (!backed) continue; // a stack built by another part of the world
    w.owner = b;
    const vol = (backed.instances[0]!.attributes.block_device_mappings as Array<{ volume_id: string }>)[0]!
      .volume_id;
    const snap = w.snapshot({
      key: `${backed.key}:snap:day${day}`,
      account: backed.asg.accountId,
      region: backed.asg.region,
      volumeId: vol,
      size: 40,
      startDay: day - 1,
      tags: backed.tags,
    });
    w.event({
      kind: 'cloudtrail',
      at: w.iso(day - 1, 3, 0),
      name: 'CreateSnapshot',
      actor: `arn:aws:sts::${backed.asg.accountId}:assumed-role/AWSBackupDefaultServiceRole/AWSBackup`,
      sourceIp: 'backup.amazonaws.com',
      arns: [snap.arn],
      payload: { eventSource: 'ec2.amazonaws.com', requestParameters: { volumeId: vol } },
    });
    w.owner = null;
  }
}

function replaceInstance(w: WorldBuilder, svc: FillerService | undefined, day: number, r: Random): void {
  const old = svc?.instances.shift();
  if (!old && svc) return;
  // Drawn whether or not this part of the world holds the stack, so every part draws the same sequence.
  const at: [number, number, number] = [day - 1, r.int(0, 23), r.int(0, 59)];
  if (!svc || !old) return;
  const subnet = svc.subnets[svc.instances.length % svc.subnets.length]!;
  for (const mapping of old.attributes.block_device_mappings as Array<{ volume_id: string }>) {
    const vol = w.get(mapping.volume_id);
    if (vol) w.remove(vol.arn); // delete_on_termination
  }
  w.remove(old.arn);
  const fresh = w.instance({
    key: `${svc.key}:gen${day}`,
    subnet,
    name: String(old.tags.Name),
    instanceType: svc.instanceType,
    sgs: [svc.appSg],
    tags: svc.tags,
    launchDay: at[0],
    rootVolume: { type: 'gp3', size: 40 },
  });
  svc.instances.push(fresh);
  w.link(svc.asg.arn, fresh.arn, 'contains');
  w.link(svc.tg.arn, fresh.arn, 'targets');
  svc.asg.attributes.instances = svc.instances.map((i) => ({
    instance_id: i.nativeId,
    availability_zone: i.availabilityZone,
    lifecycle_state: 'InService',
    health_status: 'Healthy',
  }));
  svc.tg.attributes.target_health_descriptions = svc.instances.map((i) => ({
    target: { id: i.nativeId, port: 8080 },
    target_health: { state: 'healthy' },
  }));
  const asgActor = `arn:aws:sts::${svc.asg.accountId}:assumed-role/AWSServiceRoleForAutoScaling/AutoScaling`;
  w.event({
    kind: 'cloudtrail',
    at: w.iso(...at),
    name: 'TerminateInstances',
    actor: asgActor,
    sourceIp: 'autoscaling.amazonaws.com',
    arns: [old.arn],
    payload: {
      eventSource: 'ec2.amazonaws.com',
      requestParameters: { instancesSet: { items: [{ instanceId: old.nativeId }] } },
    },
  });
  w.event({
    kind: 'cloudtrail',
    at: w.iso(at[0], at[1], Math.min(59, at[2] + 1)),
    name: 'RunInstances',
    actor: asgActor,
    sourceIp: 'autoscaling.amazonaws.com',
    arns: [fresh.arn],
    payload: { eventSource: 'ec2.amazonaws.com', requestParameters: { instanceType: svc.instanceType } },
  });
}
