import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILE, generateTypes } from './generate';

describe('generated SDK types', () => {
  it('match the OpenAPI document (run npm run sdk:generate after npm run openapi)', async () => {
    expect(await readFile(GENERATED_FILE, 'utf8')).toBe(await generateTypes());
  });

  it('describe the paths and schemas the document serves', async () => {
    const text = await readFile(GENERATED_FILE, 'utf8');
    const document = JSON.parse(
      await readFile(new URL('../../../docs/openapi.json', import.meta.url), 'utf8'),
    );
    for (const path of Object.keys(document.paths)) expect(text).toContain(`"${path}": {`);
    // A schema that admits any JSON (the triage intake takes several formats) is generated as `unknown`.
    for (const schema of Object.keys(document.components.schemas))
      expect(text).toMatch(new RegExp(`\\b${schema}: (\\{|unknown;)`));
  });
});
