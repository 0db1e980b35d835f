import type { Context, Next } from 'koa';
import { ZodError } from 'zod';
import { AppError, PaymentRequired } from '@opsi/core';

/** Names the failing fields of a zod error in one readable line. */
export function describeZodError(error: ZodError, where: string): string {
  const parts = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.length ? issue.path.join('.') : where;
    return `${path}: ${issue.message}`;
  });
  return `Invalid ${where}: ${parts.join('; ')}`;
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
  type?: string;
}

function statusOf(error: HttpLikeError): number | undefined {
  const status = error.status ?? error.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : undefined;
}

const CLIENT_ERROR_DETAILS: Record<string, string> = {
  'entity.too.large': 'Request body too large.',
  'entity.parse.failed': 'Malformed JSON in the request body.',
  'encoding.unsupported': 'Unsupported body encoding.',
  'charset.unsupported': 'Unsupported body charset.',
};

/**
 * Mounted first: every error leaves as `{detail}` (or the contract's 402 shape). Client errors keep a
 * safe message; anything unexpected is a 500 with a fixed message and the request id, stack in the log.
 */
export async function errorMiddleware(ctx: Context, next: Next) {
  try {
    await next();
  } catch (raw) {
    const error = raw as Error & HttpLikeError;
    let status: number;
    let body: unknown;
    if (raw instanceof PaymentRequired) {
      status = 402;
      body = raw.body();
    } else if (raw instanceof AppError) {
      status = raw.status;
      body = { detail: raw.detail };
      ctx.set(raw.headers);
      if (status >= 500) (ctx.state.log ?? console).error({ err: raw, status }, raw.detail);
    } else if (raw instanceof ZodError) {
      status = 400;
      body = { detail: describeZodError(raw, 'request') };
    } else if (statusOf(error) && statusOf(error)! < 500) {
      // Errors from body parsing (co-body / raw-body) and the router carry a status and a safe type.
      status = statusOf(error)!;
      body = {
        detail: CLIENT_ERROR_DETAILS[error.type ?? ''] ?? (error.expose ? error.message : 'Bad request.'),
      };
    } else {
      status = statusOf(error) ?? 500;
      body = { detail: `Internal error. Quote request id ${String(ctx.state.requestId)} when reporting it.` };
      (ctx.state.log ?? console).error({ err: raw }, 'request failed');
    }
    ctx.status = status;
    ctx.body = body;
    if (status === 413 || status === 400) ctx.set('Connection', 'close');
  }
}
