import { build } from 'esbuild';

// Bundles the command into one file, dist/opsi.js, for the installable package (`npm pack` runs it):
// an installed `opsi` needs neither tsx nor the workspace's packages. Command modules stay separate
// chunks so `opsi --help` loads commander and nothing else.

/** Bundles apps/cli/src/main.ts into `outdir` (default apps/cli/dist). */
export async function bundleCli(outdir = new URL('../dist/', import.meta.url).pathname) {
  await build({
    entryPoints: { opsi: new URL('../src/main.ts', import.meta.url).pathname },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: false,
    legalComments: 'none',
    // Bundled CommonJS dependencies (commander) call require() for Node's own modules.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  return `${outdir.replace(/\/$/, '')}/opsi.js`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.warn(`wrote ${await bundleCli()}`);
}
