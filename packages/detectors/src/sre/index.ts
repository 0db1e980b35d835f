import type { Detector } from '../detector';

/** The sre detectors. */
export const SRE_DETECTORS: Detector[] = [];
