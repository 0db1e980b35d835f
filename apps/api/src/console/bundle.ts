// The web console's browser code (apps/api/src/console/client) as files the service serves itself.
//
// Development (`npm start`): esbuild bundles the client in memory when the API starts, once; nothing is
// written and there is no extra step. Production (`npm run build`, NODE_ENV=production): scripts/build.mjs
// writes the same bundle under apps/api/dist/console/, and the service serves those files. Code
// splitting keeps the first load small: the graph page's Cytoscape.js is a chunk fetched when the page
// is opened.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleAsset {
  type: string;
  body: Buffer;
}

/**
 * The API package's root, from its source or from any compiled file that bundles this module
 * (apps/api/dist/main.js, apps/standalone/dist/main.js): the nearest ancestor holding apps/api.
 */
function apiRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'apps/api/package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('apps/api not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return join(dir, 'apps/api');
}

const ROOT = apiRoot();
export const CONSOLE_ENTRY = join(ROOT, 'src/console/client/main.ts');
export const CONSOLE_DIST = join(ROOT, 'dist/console');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};
const typeOf = (name: string) => TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';

/** The esbuild options of the console bundle: shared by the service (in memory) and scripts/build.mjs. */
export function consoleBuildOptions(outdir: string) {
  return {
    entryPoints: { console: CONSOLE_ENTRY },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm' as const,
    target: ['chrome100', 'firefox100', 'safari15'],
    minify: true,
    sourcemap: false,
    // Names carry a content hash: the files are cached for good, and a new build has new names.
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    logLevel: 'warning' as const,
  };
}

async function bundleInMemory(): Promise<Map<string, ConsoleAsset>> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({ ...consoleBuildOptions(CONSOLE_DIST), write: false });
  const files = new Map<string, ConsoleAsset>();
  for (const f of result.outputFiles) {
    const name = f.path.slice(f.path.lastIndexOf('/') + 1);
    files.set(name, { type: typeOf(name), body: Buffer.from(f.contents) });
  }
  return files;
}

function readBuilt(): Map<string, ConsoleAsset> {
  const files = new Map<string, ConsoleAsset>();
  for (const name of readdirSync(CONSOLE_DIST))
    files.set(name, { type: typeOf(name), body: readFileSync(join(CONSOLE_DIST, name)) });
  return files;
}

let pending: Promise<Map<string, ConsoleAsset>> | undefined;

/** The hashed names of the entry's script and stylesheet, for the page that loads them. */
export function entryFiles(files: Map<string, ConsoleAsset>): { js: string; css: string } {
  const names = [...files.keys()];
  const js = names.find((n) => /^console-[A-Z0-9]+\.js$/i.test(n));
  const css = names.find((n) => /^console-[A-Z0-9]+\.css$/i.test(n));
  if (!js || !css) throw new Error(`console bundle incomplete: ${names.join(', ')}`);
  return { js, css };
}

/**
 * The console's files by name (console-<hash>.js, console-<hash>.css, chunk-<hash>.js), built once per process. In
 * production the files written by `npm run build`; otherwise bundled now from the sources.
 */
export function consoleAssets(production: boolean): Promise<Map<string, ConsoleAsset>> {
  pending ??=
    production && existsSync(CONSOLE_DIST) && readdirSync(CONSOLE_DIST).some((n) => n.startsWith('console-'))
      ? Promise.resolve(readBuilt())
      : bundleInMemory();
  // A failed build is tried again by the next request rather than kept.
  pending.catch(() => (pending = undefined));
  return pending;
}
