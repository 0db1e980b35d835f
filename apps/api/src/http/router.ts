import Router from '@koa/router';
import { Transform } from 'node:stream';
import coBody from 'co-body';
import type { Context } from 'koa';
import type { z } from 'zod';
import {
  AppError,
  BadRequest,
  NotFound,
  PayloadTooLarge,
  Unauthorized,
  UnsupportedMediaType,
} from '@opsi/core';
import type { ApiDeps } from '../deps';
import { LoginRedirect, assertOwnTenant, authenticate } from './authenticate';
import { describeZodError } from './errors';
import { Reply, type RouteSpec } from './route';

function parsePart<T>(schema: z.ZodType<T> | undefined, value: unknown, where: string, status: 400 | 404): T {
  if (!schema) return value as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  if (status === 404) throw new NotFound();
  throw new BadRequest(describeZodError(result.error, where));
}

const MAX_DEPTH = 32;
/** A UTF-16 surrogate without its pair: not a character, and stored as U+FFFD if let through. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Refuses, before any schema or handler sees it, a string input Postgres cannot store: a NUL character
 * (U+0000) anywhere in a path parameter, query parameter or body value or key. Also bounds how deeply a
 * body nests (no schema here takes more than a few levels). Walks without recursion: a hostile body
 * nests thousands deep.
 */
function assertStorableInput(value: unknown, where: string, nulAllowed = false) {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: where, depth: 0 }];
  while (stack.length) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (!nulAllowed && v.includes('\u0000'))
        throw new BadRequest(`${path}: must not contain a NUL character (U+0000).`);
      if (LONE_SURROGATE.test(v)) throw new BadRequest(`${path}: is not valid Unicode (a lone surrogate).`);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) throw new BadRequest(`${path}: nests deeper than ${MAX_DEPTH} levels.`);
    for (const [key, child] of Object.entries(v)) {
      const childPath = `${path}.${key}`;
      if (key.includes('\u0000') || LONE_SURROGATE.test(key)) {
        throw new BadRequest(
          `${path}: a field name contains a NUL character (U+0000) or is not valid Unicode.`,
        );
      }
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
}

function hasBody(ctx: Context): boolean {
  return Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
}

/**
 * The request body as a stream that fails with 400 on bytes that are not UTF-8 (decoding would turn
 * them silently into U+FFFD). A compressed body is left to the parser, which inflates it.
 */
function utf8Checked(ctx: Context): Context['req'] {
  const encoding = ctx.get('content-encoding');
  if (encoding && encoding !== 'identity') return ctx.req;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const check = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        return callback(new BadRequest('The request body is not valid UTF-8.'));
      }
      callback(null, chunk);
    },
    flush(callback) {
      try {
        decoder.decode();
      } catch {
        return callback(new BadRequest('The request body is not valid UTF-8.'));
      }
      callback();
    },
  });
  ctx.req.on('error', (e) => check.destroy(e));
  const stream = ctx.req.pipe(check) as unknown as Context['req'];
  // co-body reads the length and encoding from the headers of what it is given.
  Object.assign(stream, { headers: ctx.req.headers });
  return stream;
}

async function readBody(ctx: Context, route: RouteSpec, limit: number): Promise<unknown> {
  // An authenticated route without a body schema still has a JSON body read, so that a tenant_id in
  // it meets the cross-tenant check (403); its handler never sees that body.
  if (!route.body && route.auth === 'none') return undefined;
  if (!hasBody(ctx)) return route.body ? {} : undefined;
  // Refused from its declared length before a byte is read (the error handler drains the upload).
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) {
    throw new PayloadTooLarge(`Request body too large (limit ${limit} bytes).`);
  }
  const types = route.body ? (route.bodyTypes ?? ['json']) : ['json'];
  try {
    if (types.includes('json') && ctx.is('application/json', '+json')) {
      return await coBody.json(utf8Checked(ctx), { limit, strict: true });
    }
    if (types.includes('sns') && ctx.get('x-amz-sns-message-type') && ctx.is('text/plain')) {
      // Amazon SNS posts its JSON as text/plain; parsed as JSON all the same (decisions.md "Wave 3").
      const text = await coBody.text(utf8Checked(ctx), { limit, encoding: 'utf8' });
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new BadRequest('Malformed JSON in the SNS message body.');
      }
    }
    if (types.includes('form') && ctx.is('application/x-www-form-urlencoded')) {
      return await coBody.form(utf8Checked(ctx), { limit });
    }
  } catch (e) {
    // co-body marks unparsable JSON only with status 400 (no type): name it for the caller.
    if (e instanceof AppError) throw e;
    const error = e as Error & { status?: number; type?: string };
    if (error.status === 400 && !error.type) {
      throw new BadRequest(
        error instanceof SyntaxError
          ? 'Malformed JSON in the request body.'
          : 'The request body must be a JSON object.',
      );
    }
    throw e;
  }
  if (!route.body) return undefined; // a body the route does not take, and not JSON: ignored
  throw new UnsupportedMediaType(
    `Send the body as ${types.map((t) => (t === 'json' ? 'application/json' : t === 'sns' ? 'text/plain (from Amazon SNS, with x-amz-sns-message-type)' : 'application/x-www-form-urlencoded')).join(' or ')}.`,
  );
}

function serialize(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body));
}

/** Turns route declarations into router entries: authenticate, parse, call, validate, respond. */
export function buildRouter(routes: RouteSpec[], deps: ApiDeps): Router {
  const router = new Router();
  const validateResponses = deps.config.NODE_ENV !== 'production';
  for (const route of routes) {
    router.register(route.path, [route.method], async (ctx: Context) => {
      ctx.state.routePath = route.path;
      let auth;
      try {
        auth = await authenticate(ctx, deps, route.auth);
      } catch (e) {
        if (e instanceof LoginRedirect) {
          ctx.redirect(`/login?next=${encodeURIComponent(ctx.originalUrl)}`);
          return;
        }
        // Amazon SNS posts without the subscription URL's credentials and sends them (as HTTP Basic) only
        // after a 401 that challenges for Basic with a realm: the route it posts to says so.
        if (e instanceof Unauthorized && route.bodyTypes?.includes('sns'))
          throw new Unauthorized(e.detail, true);
        throw e;
      }
      const rawBody = await readBody(
        ctx,
        route,
        route.bodyLimit?.(deps.config) ?? deps.config.BODY_LIMIT_BYTES,
      );
      assertStorableInput(ctx.params, 'path');
      assertStorableInput(ctx.query, 'query');
      assertStorableInput(rawBody, 'body', route.bodyMayHoldNul === true);
      if (auth) assertOwnTenant(ctx, auth, rawBody);
      const params = parsePart(route.params, ctx.params, 'path', 404);
      const query = parsePart(route.query, ctx.query, 'query', 400);
      const body = route.body ? parsePart(route.body, rawBody, 'body', 400) : undefined;
      const result = await route.handler({ ctx, deps, auth: auth as never, params, query, body });
      if (ctx.headerSent || ctx.respond === false) return; // the handler took over the response (SSE)
      const out = result instanceof Reply ? result : new Reply(200, result);
      ctx.status = out.status;
      ctx.set(out.headers);
      if (out.body !== undefined) ctx.body = out.body;
      const schema = route.responses?.[out.status];
      if (validateResponses && schema && 'safeParse' in schema && out.body !== undefined) {
        const checked = (schema as z.ZodType).safeParse(serialize(out.body));
        if (!checked.success) {
          throw new AppError(
            500,
            `Response does not match its declared schema: ${describeZodError(checked.error, 'response')}`,
          );
        }
      }
    });
  }
  return router;
}
