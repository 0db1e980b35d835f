import { writeFile } from 'node:fs/promises';
import { GENERATED_FILE, generateTypes } from '../src/generate';

await writeFile(GENERATED_FILE, await generateTypes());
console.warn(`wrote ${GENERATED_FILE.pathname}`);
