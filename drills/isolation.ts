import { randomBytes } from 'node:crypto';
import { call, runAdmin } from '../test/support/index';
import { followRun } from '../test/support/stack';
import { alive, retireWorker, runsSettled, tenantRowCounts } from './lib/http';
import type { Drill, DrillContext, DrillTenant } from './lib/types';

// Tenant A has data of every kind: a scanned demo environment (findings, recommendations, graph
// resources with ARNs, a resolution plan), sessions with runs, an incident with a timeline, learnings,
// a runbook, an installed integration, tokens. Tenant B then calls every operation of the OpenAPI
// document with A's ids, slugs, ARNs and names, in path parameters, query parameters and bodies, with
// each of its credentials (read token, read_write token, browser session), over both APIs.
// A leak is any 2xx answer to B whose body holds anything only A has (every text A wrote carries a
// marker; ids and ARNs are A's when B's own answers never show them). A cross-tenant write is any change
// to A's row counts during the sweep.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- OpenAPI documents and JSON answers
type Json = Record<string, any>;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ARN = /arn:aws:[^"\s\\]+/g;

function strings(text: string, marker: string): string[] {
  const found = [...(text.match(UUID) ?? []), ...(text.match(ARN) ?? [])];
  const markerRe = new RegExp(`${marker}[0-9a-z-]*`, 'g');
  return [...found, ...(text.match(markerRe) ?? [])];
}

/** A's data, made over the API as a user would, and a scan of a demo environment (a pulse worker). */
async function seedVictim(ctx: DrillContext, a: DrillTenant, marker: string) {
  const base = ctx.stack.api.url;
  const tw = a.tokens.read_write;
  const ids: Record<string, string[]> = {};
  const add = (kind: string, id: unknown) => {
    if (typeof id === 'string' && id) (ids[kind] ??= []).push(id);
  };
  const env = ctx.stack.env;
  const connect = await runAdmin(
    ['env', 'connect', '--tenant', a.slug, '--demo', '--size', 'small', '--seed', '7'],
    env,
    { timeoutMs: 120_000 },
  );
  if (connect.code !== 0) throw new Error(`env connect: ${connect.stdout}${connect.stderr}`);
  const scanner = await ctx.stack.startWorker({ WORKER_QUEUES: 'pulse,plans' });
  try {
    const scan = await runAdmin(['scan', '--tenant', a.slug, '--wait'], env, { timeoutMs: 240_000 });
    if (scan.code !== 0) throw new Error(`scan: ${scan.stdout}${scan.stderr}`);
    const findings = (await call(base, 'GET', '/api/v1/pulse/findings', { token: tw })).body
      .findings as Json[];
    for (const f of findings.slice(0, ctx.scale(3, 1))) add('finding', f.id);
    const recs = (await call(base, 'GET', '/api/v1/pulse/recommendations', { token: tw })).body;
    for (const r of ((recs?.recommendations ?? []) as Json[]).slice(0, 2)) add('recommendation', r.id);
    if (ids.finding?.[0]) {
      const plan = await call(base, 'POST', `/api/pulse/findings/${ids.finding[0]}/resolution-plan`, {
        token: tw,
      });
      add('plan', plan.body?.id);
    }
    const resources = await ctx.stack.database.db
      .selectFrom('resources')
      .select(['id', 'arn', 'name', 'native_id'])
      .where('tenant_id', '=', a.id)
      .orderBy('arn')
      .limit(ctx.scale(3, 1))
      .execute();
    for (const r of resources) {
      add('resource', r.id);
      add('arn', r.arn);
      add('resource name', r.name);
      add('native id', r.native_id);
    }
  } finally {
    await retireWorker(ctx.stack, scanner, 10_000);
  }
  const session = await call(base, 'POST', '/api/v1/sessions', {
    token: tw,
    body: { name: `${marker}-session` },
  });
  add('session', session.body?.id);
  const run = await followRun(base, tw, `${marker}-prompt`, { boundMs: 60_000 });
  add('session', run.sessionId);
  add('run', run.runId);
  const incident = await call(base, 'POST', '/api/v1/incidents', {
    token: tw,
    body: { title: `${marker}-incident`, description: `${marker}-description` },
  });
  add('incident', incident.body?.id);
  if (incident.body?.id)
    await call(base, 'POST', `/api/v1/incidents/${incident.body.id}/timeline`, {
      token: tw,
      body: { body: `${marker}-note` },
    });
  const learning = await call(base, 'POST', '/api/v1/learnings', {
    token: tw,
    body: { fact: `${marker}-fact` },
  });
  add('learning', learning.body?.id);
  const runbook = await call(base, 'POST', '/api/v1/runbooks', {
    token: tw,
    body: { title: `${marker}-runbook`, service: `${marker}-svc`, steps: [`${marker}-step`] },
  });
  add('runbook', runbook.body?.id);
  const tool = await call(base, 'POST', '/api/v1/marketplace/tenant/tools', {
    token: tw,
    body: { tool_id: 'alertmanager' },
  });
  add('tool', tool.body?.id);
  const tokens = (await call(base, 'GET', '/api/v1/tokens', { token: tw })).body?.tokens as
    Json[] | undefined;
  for (const t of tokens ?? []) add('token', t.id);
  await runsSettled(ctx.stack, a.id, 60_000);
  return ids;
}

/** Everything a caller sees on the GET operations without path parameters (plus A's own detail pages). */
async function harvest(
  base: string,
  doc: Json,
  token: string,
  marker: string,
  ids: Record<string, string[]>,
) {
  const seen = new Set<string>();
  const texts: string[] = [];
  for (const [template, ops] of Object.entries(doc.paths as Json)) {
    if (!(ops as Json).get || template.includes('stream') || template.startsWith('/auth')) continue;
    const paths = template.includes('{')
      ? Object.values(ids)
          .flat()
          .map((id) =>
            template.replace(/\{(\w+)\}/g, (_, p: string) => (p === 'seq' ? '1' : encodeURIComponent(id))),
          )
      : [template];
    for (const path of paths) {
      const res = await call(base, 'GET', path, { token });
      if (res.status < 300) {
        texts.push(res.text);
        for (const s of strings(res.text, marker)) seen.add(s);
      }
    }
  }
  return { seen, text: texts.join('\n') };
}

export const drill: Drill = {
  name: 'isolation',
  description: "every operation called with another tenant's ids, slugs, ARNs and names, by every credential",
  timeoutMs: 480_000,
  async run(ctx) {
    const marker = `zzleak${randomBytes(4).toString('hex')}`;
    const a = await ctx.newTenant();
    const b = await ctx.newTenant();
    const base = ctx.stack.api.url;
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as Json;
    const ids = await seedVictim(ctx, a, marker);
    ctx.log(
      `tenant A: ${Object.entries(ids)
        .map(([k, v]) => `${v.length} ${k}`)
        .join(', ')}`,
    );
    // What only A has: everything A sees, less what B sees of its own; and A's own names.
    const mine = await harvest(base, doc, a.tokens.read_write, marker, ids);
    const theirs = await harvest(base, doc, b.tokens.read_write, marker, {});
    const secrets = new Set([
      ...mine.seen,
      a.id,
      a.slug,
      a.name,
      a.email,
      a.userId,
      ...Object.values(ids).flat(),
    ]);
    // Whatever B sees of its own (catalog ids, shared names) is not A's.
    for (const s of secrets) if (theirs.text.includes(s)) secrets.delete(s);
    secrets.add(marker);
    // Quick: one identifier of a few kinds (the same code paths, a fraction of the requests).
    const QUICK_KINDS = ['session', 'finding', 'arn', 'incident', 'token'];
    const values = ctx.quick
      ? [...QUICK_KINDS.map((k) => ids[k]?.[0]).filter((v): v is string => Boolean(v)), a.slug]
      : [...new Set([...Object.values(ids).flat(), a.slug, a.name, a.email, a.id, a.userId])];
    const before = await tenantRowCounts(ctx.stack, a.id);

    const credentials: Array<[string, Record<string, string>]> = [
      ['read', { authorization: `Bearer ${b.tokens.read}` }],
      ['read_write', { authorization: `Bearer ${b.tokens.read_write}` }],
      ['session', { cookie: b.session.cookie, 'x-csrf-token': b.session.csrf }],
    ];
    const requests: Array<{ method: string; path: string; body?: string }> = [];
    for (const [template, ops] of Object.entries(doc.paths as Json)) {
      if (template === '/auth/logout') continue;
      for (const [method, op] of Object.entries(ops as Json)) {
        const M = method.toUpperCase();
        const params = ((op as Json).parameters ?? []) as Json[];
        const fill = (v: string) =>
          template.replace(/\{(\w+)\}/g, (_, p: string) => (p === 'seq' ? '1' : encodeURIComponent(v)));
        const props = Object.keys(
          ((): Json => {
            const s = (op as Json).requestBody?.content?.['application/json']?.schema as Json | undefined;
            return ((s?.$ref ? doc.components.schemas[String(s.$ref).split('/').pop()!] : s)?.properties ??
              {}) as Json;
          })(),
        );
        for (const v of values) {
          if (template.includes('{')) requests.push({ method: M, path: fill(v) });
          for (const q of params.filter((p) => p.in === 'query'))
            requests.push({ method: M, path: `${fill(v)}?${new URLSearchParams({ [q.name]: v })}` });
          for (const prop of M === 'GET' ? [] : props)
            requests.push({
              method: M,
              path: fill(v),
              body: JSON.stringify({ [prop]: v, prompt: 'x', name: 'x' }),
            });
        }
      }
    }
    // Deletions last, so every other request still finds A's things in place.
    requests.sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));
    const leaks: string[] = [];
    const fiveXx: string[] = [];
    let sent = 0;
    let i = 0;
    for (const r of requests) {
      for (const [kind, headers] of credentials) {
        if (ctx.signal.aborted) break;
        const api = ctx.stack.apis[i++ % ctx.stack.apis.length]!;
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), 5000);
        let status = -1;
        let text = '';
        try {
          const res = await fetch(`${api.url}${r.path}`, {
            method: r.method,
            headers: { ...headers, ...(r.body ? { 'content-type': 'application/json' } : {}) },
            ...(r.body ? { body: r.body } : {}),
            signal: controller.signal,
          });
          status = res.status;
          // An event stream is read for a moment: what it carries counts as its body.
          text = await res.text().catch(() => '');
        } catch {
          // aborted: a stream that stayed open; its status is known only if the head arrived
        } finally {
          clearTimeout(timer);
        }
        sent++;
        if (status >= 500) fiveXx.push(`${kind} ${r.method} ${r.path}: ${status}`);
        if (status >= 200 && status < 300) {
          // What B sent may come back (an echo of its own prompt): only what B did not send is a leak.
          const sentText = `${decodeURIComponent(r.path.replaceAll('+', ' '))} ${r.body ?? ''}`;
          const hit = [...secrets].find((s) => text.includes(s) && !sentText.includes(s));
          if (hit) leaks.push(`${kind} ${r.method} ${r.path.slice(0, 90)}: ${status} shows ${hit}`);
        }
      }
    }
    await runsSettled(ctx.stack, b.id, 60_000);
    const after = await tenantRowCounts(ctx.stack, a.id);
    const changed = Object.keys(after).filter((t) => after[t] !== before[t]);
    for (const line of [...leaks, ...fiveXx].slice(0, 15)) ctx.log(line);
    for (const t of changed) ctx.log(`A's ${t}: ${before[t]} → ${after[t]}`);
    const exits = ctx.stack.processes.filter((p) => !alive(p)).length;
    const row = (measure: string, value: number | string, target: string, pass: boolean) => ({
      drill: 'isolation',
      measure,
      value,
      target,
      pass,
    });
    return [
      row("requests with tenant A's identifiers", sent, 'info', true),
      row(
        "identifiers of A tried / A's values watched for",
        `${values.length} / ${secrets.size}`,
        'info',
        true,
      ),
      row('leaks (2xx body with A’s data)', leaks.length, '0', leaks.length === 0),
      row("A's rows changed by B", changed.length, '0', changed.length === 0),
      row('5xx', fiveXx.length, '0', fiveXx.length === 0),
      row('process exits', exits, '0', exits === 0),
    ];
  },
};
