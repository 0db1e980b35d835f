import createClient, { type Client } from 'openapi-fetch';
import { OpsiApiError, OpsiNetworkError } from './errors';
import type { components, paths } from './openapi.gen';
import { RunStream, type RunEvent, type RunStreamOptions } from './stream';
import type { Incident, JobAccepted, ResolutionPlan, TimelineEvent } from './wave2';

export type Schemas = components['schemas'];

export interface OpsiClientOptions {
  /** The service's address, e.g. http://127.0.0.1:8080 (no /api/v1). */
  baseUrl: string;
  /** A personal access token (`opsi_…`); without it only GET /api/v1/version answers. */
  token?: string | undefined;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  userAgent?: string;
}

export interface AskOptions extends RunStreamOptions {
  sessionId?: string | undefined;
  selectedTools?: string[] | undefined;
}

type Query = Record<string, string | number | boolean | undefined>;

function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The opsi API client: `api` is the typed client generated from the OpenAPI document (openapi-fetch);
 * the methods answer the parsed body or throw OpsiApiError / OpsiNetworkError; `stream` runs a turn as
 * an async iterator of events that survives dropped connections.
 */
export class OpsiClient {
  readonly api: Client<paths>;
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly headers: Record<string, string>;

  constructor(options: OpsiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.headers = { 'user-agent': options.userAgent ?? 'opsi-sdk' };
    if (options.token) this.headers.authorization = `Bearer ${options.token}`;
    this.api = createClient<paths>({ baseUrl: this.baseUrl, headers: this.headers, fetch: this.fetchImpl });
  }

  /** Any endpoint by method and path; answers the parsed body, throws on a non-2xx answer. */
  async request<T>(
    method: string,
    path: string,
    opts: { query?: Query; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const headers: Record<string, string> = { ...this.headers, accept: 'application/json', ...opts.headers };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.baseUrl}${path}${queryString(opts.query)}`, {
        method,
        headers,
        body,
      });
    } catch (e) {
      throw new OpsiNetworkError(`cannot reach ${this.baseUrl}: ${(e as Error).cause ?? e}`, e);
    }
    const parsed = await readBody(res);
    if (!res.ok) throw OpsiApiError.from(res, parsed);
    return parsed as T;
  }

  /** Unwraps an openapi-fetch answer: the data, or OpsiApiError. */
  private async typed<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    let result: { data?: T; error?: unknown; response: Response };
    try {
      result = await call;
    } catch (e) {
      throw new OpsiNetworkError(`cannot reach ${this.baseUrl}: ${(e as Error).cause ?? e}`, e);
    }
    if (!result.response.ok) throw OpsiApiError.from(result.response, result.error);
    return result.data as T;
  }

  version() {
    return this.typed(this.api.GET('/api/v1/version'));
  }
  me() {
    return this.typed(this.api.GET('/api/v1/me'));
  }
  listTokens() {
    return this.typed(this.api.GET('/api/v1/tokens'));
  }
  async revokeToken(id: string): Promise<void> {
    await this.typed(this.api.DELETE('/api/v1/tokens/{id}', { params: { path: { id } } }));
  }
  listSessions() {
    return this.typed(this.api.GET('/api/v1/sessions'));
  }
  history(sessionId: string) {
    return this.typed(this.api.GET('/api/v1/history', { params: { query: { session_id: sessionId } } }));
  }
  listFindings(query: paths['/api/v1/pulse/findings']['get']['parameters']['query'] = {}) {
    return this.typed(this.api.GET('/api/v1/pulse/findings', { params: { query } }));
  }
  getFinding(id: string) {
    return this.typed(this.api.GET('/api/v1/pulse/findings/{id}', { params: { path: { id } } }));
  }
  rerunStep(findingId: string, seq: number) {
    return this.typed(
      this.api.POST('/api/pulse/findings/{id}/audit/{seq}/run', { params: { path: { id: findingId, seq } } }),
    );
  }

  /**
   * Starts an agent turn and streams it (GET /api/v1/stream), re-attaching with Last-Event-ID when the
   * connection drops. Iterate the answer for the events; `sessionId` and `runId` are set once it opened.
   */
  stream(prompt: string, options: AskOptions = {}): RunStream {
    const query: Query = { prompt, session_id: options.sessionId };
    if (options.selectedTools?.length) query.selected_tools = options.selectedTools.join(',');
    const sse = { ...this.headers, accept: 'text/event-stream' };
    return new RunStream(
      {
        open: (signal) =>
          this.fetchImpl(`${this.baseUrl}/api/v1/stream${queryString(query)}`, { headers: sse, signal }),
        attach: (sessionId, lastSeq, signal) =>
          this.fetchImpl(`${this.baseUrl}/api/v1/stream/attach${queryString({ session_id: sessionId })}`, {
            headers: { ...sse, 'last-event-id': String(lastSeq) },
            signal,
          }),
      },
      options,
    );
  }

  /** Re-attaches to a session's latest run after `afterSeq` (a run started elsewhere). */
  attach(sessionId: string, afterSeq = 0, options: RunStreamOptions = {}): RunStream {
    const sse = { ...this.headers, accept: 'text/event-stream' };
    const open = (lastSeq: number, signal: AbortSignal) =>
      this.fetchImpl(`${this.baseUrl}/api/v1/stream/attach${queryString({ session_id: sessionId })}`, {
        headers: { ...sse, 'last-event-id': String(lastSeq) },
        signal,
      });
    const stream = new RunStream(
      { open: (signal) => open(afterSeq, signal), attach: (_s, lastSeq, signal) => open(lastSeq, signal) },
      options,
    );
    stream.lastSeq = afterSeq;
    return stream;
  }

  /** One turn to its end over the stream: the reply, the ids and every event. */
  async ask(prompt: string, options: AskOptions = {}) {
    const stream = this.stream(prompt, options);
    const events: RunEvent[] = [];
    for await (const event of stream) events.push(event);
    const last = events[events.length - 1];
    return {
      session_id: stream.sessionId!,
      run_id: stream.runId!,
      status: last?.kind === 'run.completed' ? ('completed' as const) : ('failed' as const),
      reply: last?.kind === 'run.completed' ? String(last.reply ?? '') : null,
      detail: last?.kind === 'run.failed' ? String(last.detail ?? '') : null,
      events,
    };
  }

  // Resolution plan wizard (unversioned /api/pulse group: a read_write token).
  resolutionPlan(findingId: string) {
    return this.request<ResolutionPlan>(
      'POST',
      `/api/pulse/findings/${encodeURIComponent(findingId)}/resolution-plan`,
    );
  }
  getPlan(planId: string) {
    return this.request<ResolutionPlan>('GET', `/api/pulse/plans/${encodeURIComponent(planId)}`);
  }
  verifyStep(planId: string, seq: number) {
    return this.request<JobAccepted>(
      'POST',
      `/api/pulse/plans/${encodeURIComponent(planId)}/steps/${seq}/verify`,
    );
  }
  confirmStep(planId: string, seq: number) {
    return this.request<unknown>(
      'POST',
      `/api/pulse/plans/${encodeURIComponent(planId)}/steps/${seq}/confirm`,
    );
  }
  skipStep(planId: string, seq: number, reason: string) {
    return this.request<unknown>('POST', `/api/pulse/plans/${encodeURIComponent(planId)}/steps/${seq}/skip`, {
      body: { reason },
    });
  }
  /** Drafts the plan again from the current evidence (a stale or failed plan). */
  regeneratePlan(planId: string) {
    return this.request<JobAccepted>('POST', `/api/pulse/plans/${encodeURIComponent(planId)}/regenerate`);
  }
  finalizePlan(planId: string) {
    return this.request<JobAccepted>('POST', `/api/pulse/plans/${encodeURIComponent(planId)}/finalize`);
  }

  // Incidents.
  listIncidents(query: { status?: string; severity?: string; limit?: number; offset?: number } = {}) {
    return this.request<{ incidents: Incident[] }>('GET', '/api/v1/incidents', { query });
  }
  getIncident(id: string) {
    return this.request<Incident>('GET', `/api/v1/incidents/${encodeURIComponent(id)}`);
  }
  timeline(id: string, afterId?: number | string) {
    return this.request<{ events: TimelineEvent[] }>(
      'GET',
      `/api/v1/incidents/${encodeURIComponent(id)}/timeline`,
      {
        query: { after_id: afterId },
      },
    );
  }

  /** Reviews a Terraform plan (text or `terraform show -json`) against the live environment (read-only). */
  planReview(plan: string) {
    return this.typed(this.api.POST('/api/v1/plan-review', { body: { plan } }));
  }

  /** The latest morning report (404 before the first one). */
  morningReport() {
    return this.typed(this.api.GET('/api/v1/reports/morning/latest'));
  }
}
