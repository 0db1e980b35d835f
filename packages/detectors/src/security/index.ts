import type { Detector } from '../detector';

/** The security detectors. */
export const SECURITY_DETECTORS: Detector[] = [];
