import type { Detector } from '../detector';
import { alarmNoActions } from './alarm-no-actions';
import { asgCapacityOne } from './asg-capacity-one';
import { asgSingleAz } from './asg-single-az';
import { dynamodbNoPitr } from './dynamodb-no-pitr';
import { elasticacheNoFailover } from './elasticache-no-failover';
import { lbSingleAz } from './lb-single-az';
import { natSingleForManyAzs } from './nat-single-for-many-azs';
import { rdsNoBackups } from './rds-no-backups';
import { rdsNoDeletionProtection } from './rds-no-deletion-protection';
import { rdsSingleAz } from './rds-single-az';
import { resourceNoAlarm } from './resource-no-alarm';
import { toxicUnprotectedPublicDatabase } from './toxic-unprotected-public-database';

/** The sre detectors: the reference checks (§2.4 R1–R9), the ones no public tool has, and a toxic combination. */
export const SRE_DETECTORS: Detector[] = [
  rdsSingleAz,
  rdsNoBackups,
  rdsNoDeletionProtection,
  alarmNoActions,
  resourceNoAlarm,
  asgSingleAz,
  asgCapacityOne,
  lbSingleAz,
  elasticacheNoFailover,
  dynamodbNoPitr,
  natSingleForManyAzs,
  toxicUnprotectedPublicDatabase,
];
