/**
 * Totals: "what do X and Y cost together?", "what do the servers behind sg-web cost in total?", "add up
 * what deleting the old snapshots would save". The engine picks the set (named resources, the neighbours of
 * one of a kind, or the findings a description names) and the add_up tool adds it up from the data, so the
 * total is a tool's figure, shown with every figure it adds.
 */
import type { AddUp, FindingDetail, Neighbours, NotFound } from '../shapes';
import { ok } from '../toolbox';
import { money, num } from '../text';
import { allFindings, bullets, label, savedText, typeHint, type Ctx } from './common';
import { rankFindings } from './findings';

const SUM =
  /\b(?:together|in total|totals?|combined|altogether|add(?:ed|s)?(?: (?:it|them|these|those))? up|add up|sum(?:med)?|all (?:of )?(?:our|the)|put together|numbers you added|all together)\b/;
const MONEY = /\b(?:costs?|costing|spend\w*|spent|pay\w*|sav(?:e|es|ed|ing|ings)|worth|bill)\b/;

/** Whether a question asks for a total of money over a set. */
export function asksTotal(lower: string): boolean {
  return SUM.test(lower) && MONEY.test(lower);
}

const NAME = /\b[a-z0-9]+(?:-[a-z0-9]+)+\b/gi;

function resourceTotal(out: AddUp, what: string): string {
  const rows = out.resources.filter((r) => num(r.monthly_cost) !== null);
  return `${what} cost ${money(out.resources_monthly_cost_total)} a month in total (the add_up tool's sum of these ${rows.length} monthly costs):\n${bullets(
    out.resources.map((r) =>
      num(r.monthly_cost) !== null
        ? `${label(r)} — ${r.type} — ${money(r.monthly_cost)}/month`
        : `${label(r)} — ${r.type} — no recorded cost`,
    ),
  )}`;
}

export async function totals(ctx: Ctx): Promise<string | undefined> {
  const { box, req } = ctx;
  if (!box.has('add_up')) return undefined;
  const lower = req.prompt.toLowerCase();
  const savings = req.money === 'savings' || /\bsav(?:e|es|ed|ing|ings)\b/.test(lower);
  const names = [...new Set([...req.prompt.matchAll(NAME)].map((m) => m[0]))].filter(
    (n) => !/^us-[a-z]+-\d[a-z]?$/i.test(n) && n.toLowerCase() !== req.facets.service?.toLowerCase(),
  );
  // Two or more resources by name: their costs.
  if (names.length >= 2 && !savings) {
    const out = ok(await box.call<AddUp>('add_up', { resources: names }));
    if (out && out.resources.length >= 2) return resourceTotal(out, names.join(' and '));
  }
  // The resources of a kind behind, in or attached to one named resource ("the web servers behind sg-web").
  const hint = typeHint(lower.replace(NAME, ' '));
  if (names.length === 1 && hint && box.has('resource_neighbours') && !savings) {
    const n = ok(await box.call<Neighbours | NotFound>('resource_neighbours', { resource: names[0] }));
    if (n && 'neighbours' in n) {
      const arns = [...new Set(n.neighbours.filter((x) => x.type === hint[0]).map((x) => x.arn))];
      if (arns.length) {
        const out = ok(await box.call<AddUp>('add_up', { resources: arns }));
        if (out?.resources.length)
          return resourceTotal(
            out,
            `The ${out.resources.length} ${hint[1]} connected to ${label(n.resource)}`,
          );
      }
    }
  }
  // The findings the question is about (../finding-set): the previous answer's list when it points
  // back at it; those a description names; or all open ones, which savings_summary answers (each
  // resource counted once), so no sum is made here.
  if (!box.has('list_findings') && req.set.kind !== 'prior') return undefined;
  let chosen: Array<{ id: string; title: string }>;
  if (req.set.kind === 'prior') {
    const ids = (req.prior?.items ?? []).filter((i) => i.kind === 'finding').map((i) => i.id);
    if (!ids.length) return undefined;
    chosen = ids.map((id) => ({ id, title: id }));
  } else if (req.set.kind === 'described') {
    const f = req.facets;
    const pool = (await allFindings(ctx)).filter(
      (x) => (!f.domain || x.domain === f.domain) && (!f.severity || x.severity === f.severity),
    );
    const ranked = rankFindings(pool, req.set.words.join(' '));
    const best = ranked[0]?.score ?? 0;
    if (best < 3) return undefined;
    // The findings the description fits best (ties kept: "old snapshots" are the old and the orphaned ones).
    chosen = ranked.filter((r) => r.score >= best - 1e-9).map((r) => r.finding);
  } else return undefined;
  if (savings) {
    const out = ok(await box.call<AddUp>('add_up', { findings: chosen.map((f) => f.id) }));
    if (!out?.findings.length) return undefined;
    const n = out.findings.length;
    const these =
      req.set.kind === 'prior'
        ? n === 1
          ? 'the finding of my previous answer'
          : `the ${n} findings of my previous answer`
        : n === 1
          ? 'this finding'
          : `these ${n} findings`;
    return `Fixing ${these} would save ${savedText(out)}:\n${bullets(
      out.findings.map(
        (f) =>
          `${f.title}${f.title.includes(money(f.monthly_savings)) ? '' : ` — saves ${money(f.monthly_savings)}/month`} — finding ${f.id}`,
      ),
    )}`;
  }
  // Their resources' costs: each finding's resources, looked up.
  if (!box.has('get_finding')) return undefined;
  const arns: string[] = [];
  const titled: Array<{ id: string; title: string }> = [];
  for (const f of chosen.slice(0, 10)) {
    const d = ok(await box.call<FindingDetail | NotFound>('get_finding', { id: f.id }));
    if (d && 'resources' in d) {
      arns.push(...d.resources.map((r) => r.arn));
      titled.push({ id: f.id, title: d.title });
    }
  }
  if (!arns.length) return undefined;
  const out = ok(await box.call<AddUp>('add_up', { resources: [...new Set(arns)] }));
  if (!out?.resources.length) return undefined;
  return `${resourceTotal(out, `The ${out.resources.length} resources of the matching findings`)}\n\nThe findings: ${titled.map((f) => `${f.title} (finding ${f.id})`).join('; ')}.`;
}
