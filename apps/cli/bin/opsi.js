#!/usr/bin/env node
// The `opsi` command. An installed package carries the bundled dist/opsi.js (built by `npm pack`);
// in the repository the TypeScript sources run through tsx.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/opsi.js', import.meta.url);
if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/main.ts', import.meta.url).href);
}
