import type { FrameGroup } from './inclusive';

const pkg = (name: string) => (_fn: string, url: string) => url.includes(`/node_modules/${name}/`);
const any =
  (...tests: Array<(fn: string, url: string) => boolean>) =>
  (fn: string, url: string) =>
    tests.some((t) => t(fn, url));

/** The layers of a request that (2) attributes time to, in the API and in the bare route alike. */
export const FRAME_GROUPS: FrameGroup[] = [
  {
    label: 'request log line and child logger (pino, sonic-boom)',
    match: any(pkg('pino'), pkg('sonic-boom'), pkg('@pinojs/redact'), pkg('fast-redact')),
  },
  { label: 'request metrics (prom-client)', match: pkg('prom-client') },
  {
    label: 'token authentication (authenticateToken, synchronous part)',
    match: (fn) => fn === 'authenticateToken',
  },
  { label: 'query validation (zod)', match: pkg('zod') },
  { label: 'Kysely (building, compiling, executing queries)', match: pkg('kysely') },
  {
    label: 'pg driver (protocol, rows, dates)',
    match: any(pkg('pg'), pkg('pg-protocol'), pkg('pg-pool'), pkg('postgres-date'), pkg('pg-types')),
  },
  {
    label: 'Koa respond (JSON.stringify, socket write)',
    match: (fn, url) => fn === 'respond' && url.includes('/node_modules/koa/'),
  },
  { label: 'socket writes (writev, anywhere)', match: (fn, url) => fn === 'writev' && url === '' },
  { label: 'garbage collector', match: (fn) => fn === '(garbage collector)' },
];
