import type { Detector } from '../detector';
import { ebsUnattached } from './ebs-unattached';

/** The finops detectors. */
export const FINOPS_DETECTORS: Detector[] = [ebsUnattached];
