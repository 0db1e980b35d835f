import type { Drill } from './types';

/**
 * Every drill, in the order of the table. A drill is `drills/<name>.ts` exporting `drill`; add its
 * module here (see drills/README.md). Loaded lazily so `--only` imports only what it runs.
 */
export const DRILLS: Array<{ name: string; load: () => Promise<{ drill: Drill }> }> = [
  { name: 'sigkill', load: () => import('../sigkill') },
  { name: 'reattach', load: () => import('../reattach') },
  { name: 'restarts', load: () => import('../restarts') },
  { name: 'hostile', load: () => import('../hostile') },
  { name: 'plan-parsers', load: () => import('../plan-parsers') },
  { name: 'isolation', load: () => import('../isolation') },
  { name: 'revocation', load: () => import('../revocation') },
  { name: 'budget', load: () => import('../budget') },
  { name: 'audit', load: () => import('../audit') },
  { name: 'fairness', load: () => import('../fairness') },
  { name: 'scale', load: () => import('../scale') },
];
