/** An answer of the API other than 2xx: its status, its `{detail}` and the request id to quote. */
export class OpsiApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: unknown,
    readonly requestId: string | null,
  ) {
    super(`${status}: ${detail}`);
    this.name = 'OpsiApiError';
  }

  /** Builds the error from a response whose body has been read (JSON or text). */
  static from(response: Response, body: unknown): OpsiApiError {
    let detail = response.statusText || 'request failed';
    if (body && typeof body === 'object') {
      const b = body as { detail?: unknown; message?: unknown };
      if (typeof b.detail === 'string') detail = b.detail;
      else if (typeof b.message === 'string') detail = b.message;
    } else if (typeof body === 'string' && body.trim()) detail = body.trim().slice(0, 500);
    return new OpsiApiError(response.status, detail, body, response.headers.get('x-request-id'));
  }
}

/** The network failed or the server could not be reached (no HTTP answer). */
export class OpsiNetworkError extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'OpsiNetworkError';
  }
}

/** A run stream that could not be re-attached within its bound of reconnections. */
export class OpsiStreamError extends Error {
  constructor(
    message: string,
    readonly lastSeq: number,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'OpsiStreamError';
  }
}
