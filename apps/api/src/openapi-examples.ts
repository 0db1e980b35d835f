import { existsSync, readFileSync } from 'node:fs';

/** A real request and answer of one route, recorded by `npm run openapi:examples`. */
export interface RouteExample {
  request?: unknown;
  status: number;
  response?: unknown;
  /** For event streams: the first frames as sent. */
  stream?: string;
}

/** Keyed by `METHOD /path/:param`, as the route declares it. */
export type ExampleSet = Record<string, RouteExample>;

// Relative to src/ from both the sources and the production bundle (dist/ sits beside src/).
export const EXAMPLES_FILE = new URL('../src/openapi-examples.json', import.meta.url);

const SECRET_KEYS = new Set(['token', 'csrf_token']);

/**
 * Cuts every list to its first 3 items, strings to 1,500 characters (a Terraform plan), and replaces
 * secrets, so an example stays short and safe.
 */
export function trimExample(value: unknown, secret = 'opsi_…'): unknown {
  if (typeof value === 'string' && value.length > 1500) return `${value.slice(0, 1500)}…`;
  if (Array.isArray(value)) return value.slice(0, 3).map((v) => trimExample(v, secret));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k,
      SECRET_KEYS.has(k) && typeof v === 'string'
        ? k === 'token'
          ? secret
          : 'csrf-token-of-the-session'
        : trimExample(v, secret),
    ]),
  );
}

/** The recorded examples (none when the file is absent). */
export function loadExamples(): ExampleSet {
  return existsSync(EXAMPLES_FILE) ? (JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as ExampleSet) : {};
}
