import type { Detector } from '../detector';
import { ebsGp2ToGp3 } from './ebs-gp2-to-gp3';
import { ebsIoToGp3 } from './ebs-io-to-gp3';
import { ebsOnStoppedInstances } from './ebs-on-stopped-instances';
import { ebsSnapshotOld } from './ebs-snapshot-old';
import { ebsUnattached } from './ebs-unattached';
import { ec2LowCpu } from './ec2-low-cpu';
import { ec2PreviousGeneration } from './ec2-previous-generation';
import { ec2StoppedLong } from './ec2-stopped-long';
import { eipUnassociated } from './eip-unassociated';
import { elbIdle } from './elb-idle';
import { logsNoRetention } from './logs-no-retention';
import { natUnused } from './nat-unused';
import { rdsIdle } from './rds-idle';
import { rdsSnapshotOrphaned } from './rds-snapshot-orphaned';

/** The finops detectors, in the reference's order (domain notes §2.2, F1–F14). */
export const FINOPS_DETECTORS: Detector[] = [
  ebsUnattached,
  ebsOnStoppedInstances,
  ebsGp2ToGp3,
  ebsIoToGp3,
  ebsSnapshotOld,
  eipUnassociated,
  ec2LowCpu,
  ec2StoppedLong,
  elbIdle,
  natUnused,
  ec2PreviousGeneration,
  rdsIdle,
  rdsSnapshotOrphaned,
  logsNoRetention,
];
