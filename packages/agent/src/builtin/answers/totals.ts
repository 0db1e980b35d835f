/**
 * Totals: "what do X and Y cost together?", "what do the servers behind sg-web cost in total?", "add up
 * what deleting the old snapshots would save". The engine picks the set (named resources, the neighbours of
 * one of a kind, or the findings a description names) and the add_up tool adds it up from the data, so the
 * total is a tool's figure, shown with every figure it adds.
 */
import type { FindingDetail, Neighbours, NotFound } from '../shapes';
import { ok } from '../toolbox';
import { money, num } from '../text';
import { allFindings, bullets, label, typeHint, type Ctx } from './common';
import { rankFindings } from './findings';

interface AddUp {
  resources: Array<{
    arn: string;
    native_id: string;
    name: string | null;
    type: string;
    monthly_cost: number | null;
  }>;
  resources_monthly_cost_total: number;
  findings: Array<{ id: string; title: string; monthly_savings: number | null }>;
  findings_monthly_savings_total: number;
  not_found: string[];
}

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
  const savings = /\bsav(?:e|es|ed|ing|ings)\b/.test(lower);
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
  // A set a description of findings names ("the unattached volumes", "the old snapshots"); a question
  // about everything ("how much could we save in total?") names none, and savings_summary answers it.
  if (!box.has('list_findings')) return undefined;
  const described = lower
    .replace(new RegExp(SUM.source, 'g'), ' ')
    .replace(new RegExp(MONEY.source, 'g'), ' ')
    .replace(
      /\b(?:how|much|what|whats|what's|is|are|the|our|we|us|could|would|can|per|a|month|monthly|year|overall|potential|across|all|open|findings?|everything|in|of|if|by|fixing|fix|them|it|do|does|each|every|there|show|me|numbers?|you|added|deleting|removing)\b/g,
      ' ',
    )
    .replace(/[^a-z0-9]+/g, ' ')
    .split(' ')
    .filter((w) => w.length >= 3)
    .join(' ');
  if (!described) return undefined;
  const ranked = rankFindings(await allFindings(ctx), req.prompt);
  const best = ranked[0]?.score ?? 0;
  if (best < 3) return undefined;
  // The findings the description fits best (ties kept: "old snapshots" are the old and the orphaned ones).
  const chosen = ranked.filter((r) => r.score >= best - 1e-9).map((r) => r.finding);
  if (savings) {
    const out = ok(await box.call<AddUp>('add_up', { findings: chosen.map((f) => f.id) }));
    if (!out?.findings.length) return undefined;
    return `Fixing these ${out.findings.length} findings would save ${money(out.findings_monthly_savings_total)} a month in total (the add_up tool's sum of their savings):\n${bullets(
      out.findings.map((f) => `${f.title} — saves ${money(f.monthly_savings)}/month — finding ${f.id}`),
    )}`;
  }
  // Their resources' costs: each finding's resources, looked up.
  if (!box.has('get_finding')) return undefined;
  const arns: string[] = [];
  for (const f of chosen.slice(0, 10)) {
    const d = ok(await box.call<FindingDetail | NotFound>('get_finding', { id: f.id }));
    if (d && 'resources' in d) arns.push(...d.resources.map((r) => r.arn));
  }
  if (!arns.length) return undefined;
  const out = ok(await box.call<AddUp>('add_up', { resources: [...new Set(arns)] }));
  if (!out?.resources.length) return undefined;
  return `${resourceTotal(out, `The ${out.resources.length} resources of the matching findings`)}\n\nThe findings: ${chosen.map((f) => `${f.title} (finding ${f.id})`).join('; ')}.`;
}
