import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allRoutes } from './app';
import { buildOpenApi } from './openapi';

const committed = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8'));

describe('the OpenAPI document', () => {
  it('docs/openapi.json is what the route declarations generate (run npm run openapi)', () => {
    expect(JSON.parse(JSON.stringify(buildOpenApi(allRoutes(), 'docs')))).toEqual(committed);
  });

  it('every $ref resolves from the document root', () => {
    const refs = [...JSON.stringify(committed).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(committed.components.schemas[ref.split('/').pop()!]).toBeDefined();
    }
  });

  it('documents every versioned endpoint with its security and error answers', () => {
    const paths = committed.paths as Record<
      string,
      Record<string, { security: unknown[]; responses: Record<string, unknown> }>
    >;
    expect(paths['/api/v1/ask']!.post!.security).toEqual([
      { bearer: ['read_write'] },
      { basic: ['read_write'] },
    ]);
    expect(Object.keys(paths['/api/v1/ask']!.post!.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '413', '429', '502']),
    );
    expect(paths['/api/v1/version']!.get!.security).toEqual([]);
    for (const [path, ops] of Object.entries(paths)) {
      for (const op of Object.values(ops)) {
        if (
          path !== '/api/v1/version' &&
          path !== '/api/v1/openapi.json' &&
          !path.startsWith('/auth/login')
        ) {
          expect(op.responses['401'], `${path} documents 401`).toBeDefined();
        }
      }
    }
  });
});
