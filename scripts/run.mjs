// `node scripts/run.mjs <entry.ts> [args…]`: what every npm script that starts a process runs.
// With NODE_ENV=production it runs the entry's compiled JavaScript (scripts/build.mjs), building it
// first when a source is newer than the build; otherwise it runs the TypeScript source through tsx,
// as development always has. One process either way (tsx is registered in-process, not a wrapper),
// so signals reach the service itself.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [entry] = process.argv.splice(2, 1);
if (!entry) {
  console.error('usage: node scripts/run.mjs <entry.ts> [args…]');
  process.exit(2);
}
// The program sees its own argv: [node, <entry>, …args], as if it had been started directly.
process.argv[1] = resolve(entry);

if (process.env.NODE_ENV === 'production') {
  const { ensureBuilt, outputFor } = await import('./build.mjs');
  const output = outputFor(entry);
  if (!output) {
    console.error(`${entry} has no compiled output (see ENTRIES in scripts/build.mjs)`);
    process.exit(2);
  }
  await ensureBuilt();
  process.setSourceMapsEnabled(true); // stack traces name the TypeScript sources
  await import(pathToFileURL(output).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(resolve(entry)).href);
}
