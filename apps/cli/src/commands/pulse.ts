import type { Context } from '../context';
import { money, preview, severity, status, table, when } from '../format';

export interface FindingsOptions {
  status?: string;
  severity?: string;
  domain?: string;
  sort?: string;
  dir?: string;
}

export async function findings(ctx: Context, opts: FindingsOptions) {
  const client = await ctx.client();
  const query: Record<string, string> = {};
  if (opts.status) query.status = opts.status;
  if (opts.severity) query.severity = opts.severity;
  if (opts.domain) query.domain = opts.domain;
  if (opts.sort) query.sort_by = opts.sort;
  if (opts.dir) query.sort_dir = opts.dir;
  const result = await client.listFindings(query as never);
  if (ctx.json) return ctx.printJson(result);
  const c = ctx.c;
  if (result.findings.length === 0) return ctx.out(c.dim('No findings match.'));
  ctx.out(
    table(
      c,
      ['ID', 'SEVERITY', 'STATUS', 'DOMAIN', 'SAVINGS/MO', 'TITLE'],
      result.findings.map((f) => [
        f.id,
        severity(c, f.severity),
        status(c, f.status),
        f.domain,
        f.savings ? money(f.savings) : c.dim('—'),
        f.title,
      ]),
      ctx.isTty ? process.stdout.columns : undefined,
    ),
  );
  ctx.note(`${result.findings.length} finding${result.findings.length === 1 ? '' : 's'}`);
}

export async function finding(ctx: Context, id: string) {
  const client = await ctx.client();
  const f = await client.getFinding(id);
  if (ctx.json) return ctx.printJson(f);
  const c = ctx.c;
  ctx.out(c.bold(f.title));
  ctx.out(
    `${severity(c, f.severity)} · ${status(c, f.status)} · ${f.domain} · ${f.check_id} · confidence ${f.confidence}${f.regressed ? ` · ${c.red('regressed')}` : ''}`,
  );
  ctx.out(
    c.dim(`detected ${when(f.detected_at)} · last seen ${when(f.last_seen_at)} · by ${f.producing_agent}`),
  );
  ctx.out();
  ctx.out(f.narrative);
  if (f.resources.length) {
    ctx.out();
    ctx.out(c.bold(`Resources (${f.resources.length})`));
    ctx.out(
      table(
        c,
        ['NAME', 'TYPE', 'REGION', 'COST/MO', 'SAVINGS/MO', 'CONSOLE'],
        f.resources.map((r) => [
          r.name ?? r.native_id,
          r.type,
          r.region,
          money(r.monthly_cost),
          money(r.savings),
          r.console_url ?? '—',
        ]),
      ),
    );
  }
  if (f.recommendation) {
    ctx.out();
    ctx.out(c.bold('Recommendation'));
    ctx.out(
      `${f.recommendation.action_type} · saves ${money(f.recommendation.savings)}/mo · effort ${f.recommendation.effort} · priority ${f.recommendation.priority}`,
    );
    ctx.out(f.recommendation.rationale);
  }
  ctx.out();
  const s = f.audit.summary;
  ctx.out(
    c.bold(`Evidence trail`) +
      c.dim(
        ` (${s.total_steps} steps, ${s.total_queries} queries, ${s.failures} failures, ${s.self_corrections} self-corrections)`,
      ),
  );
  if (f.audit.steps.length === 0) ctx.out(c.dim('No steps recorded.'));
  for (const step of f.audit.steps) {
    const mark = step.status === 'success' ? c.green('✓') : c.red('✗');
    ctx.out(
      `${String(step.seq).padStart(3)} ${mark} ${step.step_kind} ${c.bold(step.title)} ${c.dim(`${step.tool_name} · ${step.row_count ?? '—'} rows · ${step.duration_ms ?? '—'} ms${step.rerunnable ? ' · rerunnable' : ''}${step.is_self_correction ? ' · self-correction' : ''}`)}`,
    );
    if (step.query_sql) ctx.out(c.dim(`      ${preview(step.query_sql, 160)}`));
    if (step.error_message) ctx.out(c.red(`      ${step.error_message}`));
  }
  const rerunnable = f.audit.steps.find((st) => st.rerunnable);
  if (rerunnable) ctx.note(`Re-run a step live: opsi rerun ${f.id} ${rerunnable.seq}`);
}

export async function rerun(ctx: Context, id: string, seqText: string) {
  const seq = Number(seqText);
  const client = await ctx.client();
  const result = await client.rerunStep(id, seq);
  if (ctx.json) return ctx.printJson(result);
  const c = ctx.c;
  ctx.out(
    `Step ${result.seq} re-run: ${result.row_count} rows in ${result.duration_ms} ms${result.truncated ? c.yellow(' (truncated)') : ''}; ${result.differs ? c.yellow(`differs from the recorded ${result.recorded_row_count ?? '—'} rows`) : c.green('same as recorded')}`,
  );
  const rows = result.rows.slice(0, 20);
  if (rows.length) {
    const headers = Object.keys(rows[0]!);
    ctx.out(
      table(
        c,
        headers,
        rows.map((r) => headers.map((h) => preview(r[h], 60))),
      ),
    );
    if (result.rows.length > rows.length)
      ctx.note(`${result.rows.length - rows.length} more rows (use --json)`);
  }
}

export async function sessions(ctx: Context) {
  const result = await (await ctx.client()).listSessions();
  if (ctx.json) return ctx.printJson(result);
  if (result.sessions.length === 0)
    return ctx.out(ctx.c.dim('No sessions yet: opsi ask "<question>" starts one.'));
  ctx.out(
    table(
      ctx.c,
      ['ID', 'UPDATED', 'NAME'],
      result.sessions.map((s) => [s.id, when(s.updated_at), s.name]),
      ctx.isTty ? process.stdout.columns : undefined,
    ),
  );
}

export async function history(ctx: Context, sessionId: string) {
  const result = await (await ctx.client()).history(sessionId);
  if (ctx.json) return ctx.printJson(result);
  for (const m of result.messages) {
    ctx.out(
      `${m.role === 'user' ? ctx.c.cyan('you') : ctx.c.green('opsi')} ${ctx.c.dim(when(m.created_at))}`,
    );
    ctx.out(m.content);
    ctx.out();
  }
}

export async function tokens(ctx: Context) {
  const result = await (await ctx.client()).listTokens();
  if (ctx.json) return ctx.printJson(result);
  const c = ctx.c;
  const state = (t: (typeof result.tokens)[number]) =>
    t.revoked_at ? 'revoked' : t.expires_at && Date.parse(t.expires_at) <= Date.now() ? 'expired' : 'active';
  ctx.out(
    table(
      c,
      ['ID', 'SCOPE', 'TOKEN', 'CREATED', 'EXPIRES', 'LAST USED', 'STATUS', 'NAME'],
      result.tokens.map((t) => [
        t.id,
        t.scope,
        `${t.token_hint}…`,
        when(t.created_at),
        t.expires_at ? when(t.expires_at) : 'never',
        when(t.last_used_at),
        status(c, state(t)),
        t.name,
      ]),
    ),
  );
}

export async function revokeToken(ctx: Context, id: string) {
  await (await ctx.client()).revokeToken(id);
  if (ctx.json) return ctx.printJson({ id, revoked: true });
  ctx.out(`${ctx.c.green('✓')} Token ${id} revoked.`);
}
