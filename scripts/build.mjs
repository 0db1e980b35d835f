// `npm run build`: compiles each process's entry point into one JavaScript file beside its sources
// (apps/<app>/dist/main.js, packages/db/dist/migrate.cli.js), so production runs plain JavaScript.
//
// esbuild bundles our own workspace packages (they export TypeScript sources) into each file and leaves
// every third-party package external, loaded from node_modules as before. Each output sits one level
// under its package, like its source, so paths relative to `import.meta.url` (a package's own
// package.json, the docs) resolve the same from both. Plain JavaScript: no tsx needed to run it.
import { readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Source entry → compiled output, both relative to the repository root. */
export const ENTRIES = {
  'apps/standalone/src/main.ts': 'apps/standalone/dist/main.js',
  'apps/api/src/main.ts': 'apps/api/dist/main.js',
  'apps/worker/src/main.ts': 'apps/worker/dist/main.js',
  'apps/scheduler/src/main.ts': 'apps/scheduler/dist/main.js',
  'apps/admin/src/main.ts': 'apps/admin/dist/main.js',
  'packages/db/src/migrate.cli.ts': 'packages/db/dist/migrate.cli.js',
  // The plan parser's worker thread (packages/core/src/plan-review/parse-pool.ts loads it by this path).
  'packages/core/src/plan-review/parse.worker.ts': 'packages/core/dist/parse.worker.js',
};

/** The compiled output of a source entry (as given to scripts/run.mjs), or undefined. */
export function outputFor(entry) {
  const output = ENTRIES[relative(ROOT, join(ROOT, entry)).split('\\').join('/')];
  return output && join(ROOT, output);
}

/** Newest modification time (ms) among what the outputs are built from: sources, manifests, this file. */
function newestInput() {
  let newest = statSync(fileURLToPath(import.meta.url)).mtimeMs;
  const visit = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist') visit(path);
      } else if (/\.(ts|json|css)$/.test(e.name) && !/\.test\.ts$/.test(e.name)) {
        newest = Math.max(newest, statSync(path).mtimeMs);
      }
    }
  };
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(ROOT, group))) {
      visit(join(ROOT, group, name, 'src'));
      try {
        newest = Math.max(newest, statSync(join(ROOT, group, name, 'package.json')).mtimeMs);
      } catch {
        // not a package
      }
    }
  }
  return newest;
}

/** The web console's browser bundle (apps/api/src/console/bundle.ts serves it in production). */
const CONSOLE_OUT = 'apps/api/dist/console';

/**
 * The console bundle's esbuild options: the same as consoleBuildOptions in apps/api/src/console/bundle.ts,
 * which bundles in memory in development (a unit test keeps the two equal; this file is plain JavaScript
 * and cannot import TypeScript).
 */
export function consoleOptions(outdir) {
  return {
    entryPoints: { console: join(ROOT, 'apps/api/src/console/client/main.ts') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    target: ['chrome100', 'firefox100', 'safari15'],
    minify: true,
    sourcemap: false,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    logLevel: 'warning',
  };
}

/** True when every output exists and is newer than every input. */
export function isBuildFresh() {
  let oldest = Infinity;
  for (const output of [...Object.values(ENTRIES), CONSOLE_OUT]) {
    try {
      oldest = Math.min(oldest, statSync(join(ROOT, output)).mtimeMs);
    } catch {
      return false;
    }
  }
  return oldest >= newestInput();
}

/** Builds every entry point (in parallel). */
export async function build() {
  const esbuild = await import('esbuild'); // a devDependency: only needed when building
  const thirdPartyExternal = {
    name: 'third-party-external',
    setup(b) {
      // Bare specifiers other than our workspace packages stay imports of node_modules.
      b.onResolve({ filter: /^[^./]/ }, (args) =>
        args.path.startsWith('@opsi/') ? undefined : { path: args.path, external: true },
      );
    },
  };
  // The console: content-hashed files, so the directory is emptied of an older build's first; its
  // directory's mtime marks the build as fresh (above).
  const consoleBuild = async () => {
    const out = join(ROOT, CONSOLE_OUT);
    rmSync(out, { recursive: true, force: true });
    await esbuild.build({ absWorkingDir: ROOT, ...consoleOptions(out) });
    const now = new Date();
    utimesSync(out, now, now);
  };
  await Promise.all([
    consoleBuild(),
    ...Object.entries(ENTRIES).map(([entry, output]) =>
      esbuild.build({
        absWorkingDir: ROOT,
        entryPoints: [entry],
        outfile: output,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        sourcemap: 'linked',
        // Class and function names stay as written: logs and errors name them.
        keepNames: true,
        logLevel: 'warning',
        plugins: [thirdPartyExternal],
      }),
    ),
  ]);
}

/** Builds unless the outputs are fresh; answers whether it built. */
export async function ensureBuilt() {
  if (isBuildFresh()) return false;
  await build();
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const force = process.argv.includes('--force');
  const built = force ? (await build(), true) : await ensureBuilt();
  console.warn(
    built
      ? `built ${Object.keys(ENTRIES).length} entry points in ${Date.now() - started} ms: ${Object.values(
          ENTRIES,
        )
          .map((o) => dirname(o))
          .join(', ')}`
      : 'build is up to date',
  );
}
