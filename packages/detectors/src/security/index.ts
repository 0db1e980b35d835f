import type { Detector } from '../detector';
import { cloudtrailNoMultiRegion } from './cloudtrail-no-multi-region';
import { ebsUnencrypted } from './ebs-unencrypted';
import { ec2Imdsv1 } from './ec2-imdsv1';
import { iamAccessKeyOld } from './iam-access-key-old';
import { iamAdminStar } from './iam-admin-star';
import { iamConsoleUserNoMfa } from './iam-console-user-no-mfa';
import { rdsPublic } from './rds-public';
import { rdsUnencrypted } from './rds-unencrypted';
import { rootMfaDisabled } from './root-mfa-disabled';
import { s3Public } from './s3-public';
import { sgAllPortsOpen } from './sg-all-ports-open';
import { sgRdpOpen } from './sg-rdp-open';
import { sgSshOpen } from './sg-ssh-open';
import { toxicExposedInstanceSensitiveData } from './toxic-exposed-instance-sensitive-data';

/** The security detectors: single-resource checks first, then the toxic combination that spans them. */
export const SECURITY_DETECTORS: Detector[] = [
  sgAllPortsOpen,
  sgSshOpen,
  sgRdpOpen,
  s3Public,
  ebsUnencrypted,
  iamAccessKeyOld,
  rootMfaDisabled,
  iamConsoleUserNoMfa,
  rdsPublic,
  rdsUnencrypted,
  cloudtrailNoMultiRegion,
  ec2Imdsv1,
  iamAdminStar,
  toxicExposedInstanceSensitiveData,
];
