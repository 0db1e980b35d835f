import { z } from 'zod';
import { ErrorBody, TierRestrictedBody } from '@opsi/contracts';
import type { RouteSpec } from './http/route';
import { loadExamples, type ExampleSet } from './openapi-examples';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  400: 'Invalid request ({detail} names the failing fields)',
  401: 'Missing, malformed, unknown, expired or revoked credential',
  402: 'Feature gated by the tenant plan',
  403: 'Valid credential without the right: scope, tenant, or CSRF',
  404: 'No such resource in the caller’s tenant',
  409: 'Refused state change',
  413: 'Request body too large',
  415: 'Unsupported body content type',
  429: 'Daily agent budget exhausted (Retry-After: seconds to 00:00 UTC)',
  502: 'The agent run failed ({detail} says why)',
  303: 'Redirect (HTML form posts)',
  503: 'A dependency is unavailable',
};

type Json = Record<string, unknown>;

/**
 * Converts zod schemas with zod's own JSON Schema generator. Schemas that carry an id come out as
 * `$defs`; they are hoisted into components/schemas (an input variant gets its own name when it
 * differs) and every `#/$defs/...` reference is pointed there, as OpenAPI 3.1 resolves refs from the root.
 */
function schemaConverter(components: Record<string, Json>) {
  const rename = (value: unknown, names: Map<string, string>): unknown => {
    if (Array.isArray(value)) return value.map((v) => rename(v, names));
    if (!value || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
        const id = v.slice('#/$defs/'.length);
        out[k] = `#/components/schemas/${names.get(id) ?? id}`;
      } else out[k] = rename(v, names);
    }
    return out;
  };
  return (schema: z.ZodType, io: 'input' | 'output') => {
    const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }) as Json;
    delete generated.$schema;
    const defs = (generated.$defs ?? {}) as Record<string, Json>;
    delete generated.$defs;
    const names = new Map<string, string>();
    for (const [id, def] of Object.entries(defs)) {
      let name = id;
      const existing = components[name];
      if (existing && JSON.stringify(existing) !== JSON.stringify(rename(def, names))) name = `${id}Input`;
      names.set(id, name);
    }
    for (const [id, def] of Object.entries(defs)) components[names.get(id)!] = rename(def, names) as Json;
    return rename(generated, names) as Json;
  };
}

const SECURITY: Record<string, Array<Record<string, string[]>>> = {
  none: [],
  read: [{ bearer: ['read'] }, { basic: ['read'] }],
  read_write: [{ bearer: ['read_write'] }, { basic: ['read_write'] }],
  session: [{ session: [] }],
  session_or_read_write: [{ session: [] }, { bearer: ['read_write'] }, { basic: ['read_write'] }],
};

/** The OpenAPI 3.1 document, built from the same route declarations that serve requests. */
export function buildOpenApi(routes: RouteSpec[], revision: string, examples: ExampleSet = loadExamples()) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, Json> = {};
  const jsonSchema = schemaConverter(schemas);
  for (const route of routes) {
    if (route.internal || route.auth === 'page') continue;
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters: unknown[] = [];
    const addParams = (schema: z.ZodType | undefined, where: 'path' | 'query') => {
      if (!schema || !(schema instanceof z.ZodObject)) return;
      for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
        parameters.push({
          name,
          in: where,
          required: where === 'path' || !field.safeParse(undefined).success,
          schema: jsonSchema(field, 'input'),
        });
      }
    };
    addParams(route.params, 'path');
    addParams(route.query, 'query');
    const responses: Record<string, unknown> = {};
    const example = examples[`${route.method} ${route.path}`];
    const exampleFor = (status: string, value: unknown) =>
      example && String(example.status) === status && value !== undefined ? { example: value } : {};
    for (const [status, schema] of Object.entries(route.responses ?? { 200: null })) {
      const description = STATUS_TEXT[Number(status)] ?? 'Response';
      if (schema && 'safeParse' in schema) {
        responses[status] = {
          description,
          content: {
            'application/json': {
              schema: jsonSchema(schema as z.ZodType, 'output'),
              ...exampleFor(status, example?.response),
            },
          },
        };
      } else if (schema && 'sse' in schema) {
        responses[status] = {
          description,
          content: {
            'text/event-stream': { schema: { type: 'string' }, ...exampleFor(status, example?.stream) },
          },
        };
      } else {
        responses[status] = { description };
      }
    }
    const errorStatuses = new Set([...(route.errors ?? []), ...(route.auth === 'none' ? [] : [401, 403])]);
    if (route.params) errorStatuses.add(404);
    if (route.body) errorStatuses.add(413);
    for (const status of [...errorStatuses].sort()) {
      const schema = status === 402 ? TierRestrictedBody : ErrorBody;
      responses[status] = {
        description: STATUS_TEXT[status] ?? 'Error',
        content: { 'application/json': { schema: jsonSchema(schema, 'output') } },
      };
    }
    const operation: Record<string, unknown> = {
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags ?? [],
      security: SECURITY[route.auth] ?? [],
      ...(parameters.length ? { parameters } : {}),
      responses,
    };
    if (route.body) {
      const types = route.bodyTypes ?? ['json'];
      const schema = jsonSchema(route.body, 'input');
      operation.requestBody = {
        required: true,
        content: Object.fromEntries(
          types.map((t) => [
            t === 'json'
              ? 'application/json'
              : t === 'sns'
                ? 'text/plain'
                : 'application/x-www-form-urlencoded',
            {
              schema,
              ...(t === 'json' && example?.request !== undefined ? { example: example.request } : {}),
            },
          ]),
        ),
      };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Operations Intelligence Service API',
      version: 'v1',
      description:
        'Every error body is {detail} (402: {error, message, upgrade_required}). Every response carries x-request-id. See docs/api.md for the decisions behind each shape. Examples are real requests and answers of the service on its demo environment, recorded by npm run openapi:examples (lists cut to 3 items, secrets replaced).',
      'x-revision': revision,
    },
    servers: [{ url: '/' }],
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Personal access token opsi_<43 chars>' },
        basic: {
          type: 'http',
          scheme: 'basic',
          description:
            'The same personal access token as the password (any user name), for senders that carry a credential only in a URL (https://opsi:<token>@host/...)',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'opsi_session',
          description: 'Browser session from POST /auth/login; non-GET requests also need X-CSRF-Token',
        },
      },
    },
    paths,
  };
}
