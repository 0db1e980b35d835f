import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { allRoutes } from './app';
import { buildOpenApi } from './openapi';
import { loadExamples } from './openapi-examples';

// The API reference's examples are recorded from a real service (npm run openapi:examples). A shape that
// changes after they were recorded fails here, until they are recorded again.

const examples = loadExamples();
const routes = allRoutes();
const routeOf = (key: string) => routes.find((r) => `${r.method} ${r.path}` === key);

describe('the recorded examples of the API reference', () => {
  it('cover the documented endpoints', () => {
    expect(Object.keys(examples).length).toBeGreaterThanOrEqual(55);
    for (const key of [
      'GET /api/v1/me',
      'POST /api/v1/ask',
      'GET /api/v1/pulse/findings',
      'GET /api/v1/stream',
    ])
      expect(examples[key], key).toBeDefined();
  });

  it.each(Object.keys(examples))('%s: a route, with a body and an answer its schemas accept', (key) => {
    const route = routeOf(key);
    expect(route, `${key} is a route`).toBeDefined();
    const example = examples[key]!;
    const schema = route!.responses?.[example.status];
    expect(schema === undefined ? route!.responses === undefined && example.status === 200 : true).toBe(true);
    if (schema && 'safeParse' in schema) {
      const parsed = (schema as z.ZodType).safeParse(example.response);
      expect(parsed.error?.issues ?? []).toEqual([]);
    } else if (schema && 'sse' in schema) {
      expect(example.stream).toMatch(/^id: \d+\nevent: [a-z.]+\ndata: \{/);
    }
    if (example.request !== undefined) {
      const parsed = route!.body!.safeParse(example.request);
      expect(parsed.error?.issues ?? []).toEqual([]);
    }
  });

  it('are in the OpenAPI document under their operation', () => {
    const doc = buildOpenApi(routes, 'test', examples) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, any>; requestBody?: any }>>;
    };
    const me = doc.paths['/api/v1/me']!.get!.responses['200'].content['application/json'];
    expect(me.example).toEqual(examples['GET /api/v1/me']!.response);
    const ask = doc.paths['/api/v1/ask']!.post!;
    expect(ask.requestBody.content['application/json'].example).toEqual(
      examples['POST /api/v1/ask']!.request,
    );
    expect(doc.paths['/api/v1/stream']!.get!.responses['200'].content['text/event-stream'].example).toContain(
      'event: run.started',
    );
  });
});
