// The console's addresses (decisions.md, Wave 3, "Console addresses"): one table, read by the server
// (which serves the console's page for these paths, 200, and for any other path a browser asks for
// outside the API's and the assets' prefixes, 404) and by the browser code (which renders the page a
// path names). No DOM and no Node here: both sides bundle it.

/** The pages, in the table's order: the first pattern that matches a path names its page. */
export const CONSOLE_PAGES = [
  { pattern: /^\/$/, nav: 'overview', page: 'overview' },
  { pattern: /^\/overview$/, nav: 'overview', page: 'overview' },
  { pattern: /^\/findings$/, nav: 'findings', page: 'findings' },
  { pattern: /^\/findings\/([^/]+)$/, nav: 'findings', page: 'finding' },
  { pattern: /^\/plans\/([^/]+)$/, nav: 'findings', page: 'plan' },
  { pattern: /^\/ask(?:\/([^/]+))?$/, nav: 'ask', page: 'ask' },
  { pattern: /^\/incidents$/, nav: 'incidents', page: 'incidents' },
  { pattern: /^\/incidents\/([^/]+)$/, nav: 'incidents', page: 'incident' },
  { pattern: /^\/graph$/, nav: 'graph', page: 'graph' },
  { pattern: /^\/report$/, nav: 'report', page: 'report' },
  { pattern: /^\/settings$/, nav: 'settings', page: 'settings' },
] as const;

export type ConsolePageName = (typeof CONSOLE_PAGES)[number]['page'];

/** The router paths of the console's pages (koa-router syntax), for the server. */
export const CONSOLE_ROUTE_PATHS = [
  '/',
  '/overview',
  '/findings',
  '/findings/:id',
  '/plans/:id',
  '/ask',
  '/ask/:id',
  '/incidents',
  '/incidents/:id',
  '/graph',
  '/report',
  '/settings',
];

/** The page a path names and its id segment, or undefined: the console's "not found". */
export function matchConsolePath(
  path: string,
): { nav: string; page: ConsolePageName; id?: string | undefined } | undefined {
  // A trailing slash names the same page (the server's router reads `/findings/` as `/findings` too).
  const bare = path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
  for (const p of CONSOLE_PAGES) {
    const m = p.pattern.exec(bare);
    if (m) return { nav: p.nav, page: p.page, id: m[1] };
  }
  return undefined;
}

/**
 * Prefixes that are never console pages: the API (versioned, unversioned and the console's own), the
 * assets, the documentation, sign-in, the CLI's login, the operators' dashboard, the settings forms and
 * the operational endpoints. An unknown path under them stays a JSON {detail} 404.
 */
const NOT_CONSOLE =
  /^\/(?:(?:api|console|assets|docs|auth|cli|admin|login|logout|healthz|readyz|metrics)(?:\/|$)|settings\/)/;

/** Whether a path is the console's to answer (its page, or its "not found"). */
export function isConsoleAddress(path: string): boolean {
  return !NOT_CONSOLE.test(path);
}

/**
 * An old `#/…` address as the path it now is (`#/findings/F?x=1` → `/findings/F?x=1`), or undefined
 * for any other hash (an anchor within a page).
 */
export function pathOfOldHash(hash: string): string | undefined {
  if (!hash.startsWith('#/')) return undefined;
  return hash.slice(1);
}
