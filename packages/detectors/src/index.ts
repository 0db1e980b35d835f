import type { Detector } from './detector';
import { FINOPS_DETECTORS } from './finops/index';
import { SECURITY_DETECTORS } from './security/index';
import { SRE_DETECTORS } from './sre/index';

export * from './detector';
export * from './sandbox';
export * from './runner';
export * from './savings';

/** Every detector, finops then security then sre. */
export const DETECTORS: Detector[] = [...FINOPS_DETECTORS, ...SECURITY_DETECTORS, ...SRE_DETECTORS];

export function detectorById(id: string): Detector | undefined {
  return DETECTORS.find((d) => d.id === id);
}
export * from './remediation/index';
