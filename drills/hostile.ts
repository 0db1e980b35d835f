import { loginOverHttp } from '../test/support/index';
import { hostileAuth, hostileCases, SSRF_TARGETS, type HostileCase } from '../test/support/hostile';
import { agentParserFuzz } from './agent-parser-fuzz';
import { runsSettled, tenantRowCounts } from './lib/http';
import type { Drill, DrillTenant } from './lib/types';

// Hostile requests over every operation of the app's own OpenAPI document (the cases of the
// hostile-input integration test: NUL bytes, invalid UTF-8, lone surrogates, deep JSON, huge strings,
// odd numbers, wrong types), sent to both APIs with each credential in turn (read_write token, read
// token, browser session, a token that does not exist). Several lanes run at once, each as a tenant of
// its own, so each lane can count its tenant's rows around every request that may write.
// Expected: no 5xx; every refusal is {detail} (or Node's own 431) and leaves every row count as it was.
// Then the SSRF address list: a webhook notifier pointing at each (loopback, link-local and metadata,
// private, CGN, ULA, multicast, mapped and numeric spellings) is refused with 400 naming the rule, on
// both APIs, and installs nothing. The service refuses before connecting: no traffic leaves for them.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- OpenAPI documents and JSON answers
type Json = Record<string, any>;
type Credential = 'read_write' | 'read' | 'session' | 'unknown token';
const CREDENTIALS: Credential[] = ['read_write', 'read', 'session', 'unknown token'];

interface Tally {
  sent: number;
  fiveXx: string[];
  noDetail: string[];
  wrote: string[];
  rowsWritten: number;
  accepted: number;
}

function headersFor(doc: Json, c: HostileCase, tenant: DrillTenant, credential: Credential) {
  switch (credential) {
    case 'read_write':
      return hostileAuth(doc, c, tenant.tokens.read_write, tenant.session);
    case 'read':
      return hostileAuth(doc, c, tenant.tokens.read, tenant.session);
    case 'session':
      return { cookie: tenant.session.cookie, 'x-csrf-token': tenant.session.csrf };
    default:
      return { authorization: 'Bearer opsi_pat_drill_does_not_exist_0000000000' };
  }
}

export const drill: Drill = {
  name: 'hostile',
  description:
    '10,000 hostile requests over every route of the OpenAPI document, both APIs, every credential',
  timeoutMs: 420_000,
  async run(ctx) {
    const total = ctx.scale(10_000, 300);
    const lanes = ctx.scale(6, 2);
    const base0 = ctx.stack.apis[0]!.url;
    const doc = (await (await fetch(`${base0}/api/v1/openapi.json`)).json()) as Json;
    const all = hostileCases(doc);
    const routes = Object.values(doc.paths as Json).reduce(
      (a: number, ops) => a + Object.keys(ops as Json).length,
      0,
    );
    ctx.log(
      `${all.length} distinct hostile cases over ${routes} operations; ${total} requests in ${lanes} lanes`,
    );
    // A stride coprime with the case count walks every case once per pass, spread over every operation
    // (so the quick run touches them all too).
    const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
    let stride = 97;
    while (gcd(stride, all.length) !== 1) stride += 2;
    // The k-th request overall: case k·stride mod n, credential and API rotating with each pass over the cases.
    let next = 0;
    const tally: Tally = { sent: 0, fiveXx: [], noDetail: [], wrote: [], rowsWritten: 0, accepted: 0 };
    const lane = async () => {
      const tenant = await ctx.newTenant();
      let baseline = await tenantRowCounts(ctx.stack, tenant.id);
      for (;;) {
        if (ctx.signal.aborted) return;
        const k = next++;
        if (k >= total) return;
        const pass = Math.floor(k / all.length);
        const c = all[(k * stride) % all.length]!;
        const credential = CREDENTIALS[pass % CREDENTIALS.length]!;
        const api = ctx.stack.apis[(pass + k) % ctx.stack.apis.length]!;
        const controller = new AbortController();
        let status: number;
        let text = '';
        try {
          const res = await fetch(`${api.url}${c.path}`, {
            method: c.method,
            headers: { ...headersFor(doc, c, tenant, credential), ...c.headers },
            ...(c.body !== undefined
              ? { body: typeof c.body === 'string' ? c.body : new Uint8Array(c.body) }
              : {}),
            signal: AbortSignal.any([controller.signal, AbortSignal.timeout(30_000)]),
          });
          status = res.status;
          if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) controller.abort();
          else text = await res.text();
        } catch (e) {
          if (!controller.signal.aborted) {
            tally.sent++;
            tally.fiveXx.push(`${c.method} ${c.what} (${credential}): no answer: ${String(e)}`);
            continue;
          }
          status = 200;
        }
        tally.sent++;
        const writes = c.method !== 'GET' || c.path.startsWith('/api/v1/stream?');
        const after = writes ? await tenantRowCounts(ctx.stack, tenant.id) : baseline;
        const label = `${c.method} ${c.path.slice(0, 60)} (${c.what}, ${credential})`;
        if (status >= 500) tally.fiveXx.push(`${label}: ${status} ${text.slice(0, 160)}`);
        else if (status >= 400) {
          if (status !== 431 && !/^\{"detail":/.test(text) && !/tier_restricted/.test(text))
            tally.noDetail.push(`${label}: ${status} ${text.slice(0, 100)}`);
          const changed = Object.keys(after).filter((t) => after[t] !== baseline[t]);
          if (changed.length) {
            tally.wrote.push(
              `${label}: ${status} but ${changed.map((t) => `${t} ${baseline[t]}→${after[t]}`).join(', ')}`,
            );
            tally.rowsWritten += changed.reduce((a, t) => a + Math.abs(after[t]! - baseline[t]!), 0);
          }
        }
        if (status < 300) {
          tally.accepted++;
          // A valid request writes what a valid request writes, now or through the run it started.
          await runsSettled(ctx.stack, tenant.id, 60_000);
          baseline = await tenantRowCounts(ctx.stack, tenant.id);
        } else if (writes) baseline = after;
        if (c.path.startsWith('/auth/logout') && status < 300) {
          tenant.session = await loginOverHttp(ctx.stack.api.url, tenant.email, tenant.password);
          baseline = await tenantRowCounts(ctx.stack, tenant.id);
        }
        if ((k + 1) % 1000 === 0) ctx.log(`${k + 1}/${total} sent`);
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    const ssrf = await ssrfPass(ctx);
    for (const line of [...tally.fiveXx, ...tally.noDetail, ...tally.wrote, ...ssrf.missed].slice(0, 15))
      ctx.log(line);
    const row = (measure: string, value: number | string, target: string, pass: boolean) => ({
      drill: 'hostile',
      measure,
      value,
      target,
      pass,
    });
    return [
      row('hostile requests sent', tally.sent, `${total}`, tally.sent === total),
      row('distinct cases / operations covered', `${all.length} / ${routes}`, 'info', true),
      row('5xx (or no answer)', tally.fiveXx.length, '0', tally.fiveXx.length === 0),
      row('refusals without {detail}', tally.noDetail.length, '0', tally.noDetail.length === 0),
      row('rows written by refused requests', tally.rowsWritten, '0', tally.wrote.length === 0),
      row('requests accepted (valid despite the hostile value)', tally.accepted, 'info', true),
      row(
        'SSRF notifier URLs refused with 400 naming the rule',
        `${ssrf.refused} / ${ssrf.sent}`,
        `${ssrf.sent}`,
        ssrf.refused === ssrf.sent && ssrf.sent > 0,
      ),
      row('notifiers installed for SSRF URLs', ssrf.installed, '0', ssrf.installed === 0),
      ...(await agentParserFuzz(ctx)),
    ];
  },
};

/** Installs a webhook and a Slack notifier at every address of SSRF_TARGETS, on every API. */
async function ssrfPass(ctx: Parameters<Drill['run']>[0]) {
  const tenant = await ctx.newTenant();
  const out = { sent: 0, refused: 0, installed: 0, missed: [] as string[] };
  for (const api of ctx.stack.apis)
    for (const [url, rule] of SSRF_TARGETS)
      for (const settings of [
        { tool_id: 'webhook', settings: { url, secret: 'drill-secret-0123456789' } },
        { tool_id: 'slack', settings: { url } },
      ]) {
        if (ctx.signal.aborted) return out;
        out.sent++;
        const res = await fetch(`${api.url}/api/v1/marketplace/tenant/tools`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tenant.tokens.read_write}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify(settings),
        });
        const body = (await res.json().catch(() => ({}))) as { detail?: string };
        if (res.status === 400 && rule.test(body.detail ?? '')) out.refused++;
        else
          out.missed.push(
            `ssrf ${settings.tool_id} ${url}: ${res.status} ${JSON.stringify(body).slice(0, 120)}`,
          );
      }
  const rows = await ctx.stack.database.db
    .selectFrom('tenant_tools')
    .select('tool_id')
    .where('tenant_id', '=', tenant.id)
    .execute();
  out.installed = rows.length;
  return out;
}
