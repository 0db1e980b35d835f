/** An error whose `detail` is safe to show to the API's user; one middleware maps it to its status. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string | string[]> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export class BadRequest extends AppError {
  constructor(detail: string) {
    super(400, detail);
  }
}
export class Unauthorized extends AppError {
  /**
   * `basic`: also challenge for HTTP Basic (a second `WWW-Authenticate` line), for the routes senders post
   * to that send a URL's credentials only when challenged (Amazon SNS). Not on every route: a browser
   * answers a Basic challenge with its own login dialog.
   */
  constructor(detail = 'Authentication required: send Authorization: Bearer <token>.', basic = false) {
    super(401, detail, {
      'WWW-Authenticate': basic ? ['Bearer', 'Basic realm="opsi", charset="UTF-8"'] : 'Bearer',
    });
  }
}
export class Forbidden extends AppError {
  constructor(detail: string) {
    super(403, detail);
  }
}
export class NotFound extends AppError {
  constructor(detail = 'Not found.') {
    super(404, detail);
  }
}
export class Conflict extends AppError {
  constructor(detail: string) {
    super(409, detail);
  }
}
export class PayloadTooLarge extends AppError {
  constructor(detail = 'Request body too large.') {
    super(413, detail);
  }
}
export class UnsupportedMediaType extends AppError {
  constructor(detail = 'Send the body as application/json.') {
    super(415, detail);
  }
}
export class TooManyRequests extends AppError {
  constructor(detail: string, retryAfterSeconds: number) {
    super(429, detail, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class ServiceUnavailable extends AppError {
  constructor(detail: string, retryAfterSeconds?: number) {
    super(503, detail, retryAfterSeconds ? { 'Retry-After': String(Math.ceil(retryAfterSeconds)) } : {});
  }
}

/** The contract's one exception to `{detail}`: plan-gated features answer 402 with this body. */
export class PaymentRequired extends AppError {
  constructor(
    readonly feature: string,
    message: string,
  ) {
    super(402, message);
  }
  body() {
    return { error: 'tier_restricted', message: this.detail, upgrade_required: true } as const;
  }
}
