import type { Context } from '../context';
import { money, when } from '../format';

const count = (v: unknown) => (Array.isArray(v) ? v.length : 0);

/** The latest morning report. */
export async function report(ctx: Context) {
  const r = await (await ctx.client()).morningReport();
  if (ctx.json) return ctx.printJson(r);
  const c = ctx.c;
  const s = r.sections;
  ctx.out(c.bold(r.headline));
  ctx.out(c.dim(`${when(r.period.from)} → ${when(r.period.to)} · generated ${when(r.generated_at)}`));
  ctx.out();
  ctx.out(
    `Findings: ${count(s.new_findings)} new, ${count(s.resolved_findings)} resolved, ${count(s.regressed_findings)} regressed`,
  );
  ctx.out(
    `Savings: ${money(s.savings?.open_monthly)}/mo open, ${money(s.savings?.realized_monthly)}/mo realized`,
  );
  if (s.incidents)
    ctx.out(
      `Incidents: ${s.incidents.opened} opened, ${s.incidents.resolved} resolved, ${s.incidents.open} open`,
    );
  if (count(s.top_clusters)) ctx.out(`Top clusters: ${count(s.top_clusters)}`);
}
