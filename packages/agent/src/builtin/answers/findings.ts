/** Findings: what is open, what could save the most, one finding in detail and how to fix it, picks among a previous list. */
import { asksAmount } from '../finding-set';
import type { PriorItem } from '../history';
import { isReferenceOnly } from '../parse';
import type {
  AddUp,
  FindingDetail,
  FindingList,
  FindingSummary,
  NotFound,
  ResourceDetail,
  SavingsSummary,
} from '../shapes';
import { ok } from '../toolbox';
import { money, num, severityRank, words, wordsMatch } from '../text';
import {
  allFindings,
  bullets,
  bySeverity,
  candidatesOf,
  findingLine,
  hasFacets,
  label,
  numbered,
  quoted,
  resolveAccount,
  savedText,
  scopeText,
  skippedNote,
  unavailable,
  type Ctx,
  type Handler,
} from './common';

function followUpNote(ctx: Ctx, scope: string): string {
  return ctx.req.understoodAs ? `(Following up: I read this as ${ctx.req.understoodAs}: ${scope}.)\n\n` : '';
}

function breakdown(counts: Record<string, number> | undefined, order: string[]): string {
  if (!counts) return '';
  return order
    .filter((k) => (counts[k] ?? 0) > 0)
    .map((k) => `${counts[k]} ${k}`)
    .join(', ');
}

/** "What is open?" — overall, or by domain, severity, service tag or account. */
export const openFindings: Handler = async (ctx) => {
  const { box, req } = ctx;
  const f = req.facets;
  if (!box.has('list_findings')) {
    if (!hasFacets(f) && box.has('savings_summary')) return countsOnly(ctx);
    return unavailable(ctx, ['list_findings'], 'list the open findings');
  }
  const account = await resolveAccount(ctx, f.account);
  if (account.status === 'unknown')
    return `I found no account ${quoted(ctx, account.text) ? `called ${quoted(ctx, account.text)}` : 'with the id or name you gave'} in the inventory (I searched its aws_account resources), so I cannot list its findings. Ask "what is open?" for every account.`;
  if (account.status === 'unavailable')
    return unavailable(
      ctx,
      ['search_resources'],
      `find the account ${quoted(ctx, f.account) ?? 'you named'} by name`,
    );
  const accountLabel = account.status === 'ok' ? account.label : undefined;
  const scope = scopeText(f, accountLabel);
  const list = ok(
    await box.call<FindingList>('list_findings', {
      ...(f.domain ? { domain: f.domain } : {}),
      ...(f.severity ? { severity: f.severity } : {}),
      ...(f.service ? { service: f.service } : {}),
      ...(account.status === 'ok' ? { account_id: account.id } : {}),
      sort_by: req.sortBySavings ? 'savings' : 'severity',
      limit: req.limit ?? 10,
    }),
  );
  if (!list) return 'The findings could not be listed in this turn.';
  const intro = followUpNote(ctx, scope);
  if (list.total === 0) {
    let text = `${intro}There are no ${scope}.`;
    if (f.service && box.has('search_resources')) {
      const tagged = ok(
        await box.call<{ resources: unknown[] }>('search_resources', { service: f.service, limit: 1 }),
      );
      if (tagged && tagged.resources.length === 0)
        text += ` No resource in the inventory is tagged service=${f.service} either, so I have no data about that service.`;
    }
    return text;
  }
  const parts: string[] = [];
  parts.push(
    `${intro}There ${list.total === 1 ? 'is' : 'are'} ${list.total} ${scopeText(f, accountLabel, list.total === 1)}.`,
  );
  if (!hasFacets(f) && box.has('savings_summary')) {
    const s = ok(await box.call<SavingsSummary>('savings_summary', { top: 3 }));
    if (s) {
      parts.push(
        `By domain: ${breakdown(s.by_domain, ['finops', 'security', 'sre'])}. By severity: ${breakdown(s.by_severity, ['critical', 'high', 'medium', 'low', 'info'])}.` +
          (num(s.monthly_savings)
            ? ` Fixing them could save ${money(s.monthly_savings)} a month (each resource counted once).`
            : ''),
      );
    }
  }
  const shown = list.findings.length;
  const order = req.sortBySavings ? 'largest savings first' : 'most severe first';
  parts.push(
    shown < list.total
      ? `The first ${shown}, ${order}:\n${numbered(list.findings.map((x) => findingLine(x)))}`
      : `${order[0]!.toUpperCase()}${order.slice(1)}:\n${numbered(list.findings.map((x) => findingLine(x)))}`,
  );
  if (shown < list.total)
    parts.push('Narrow it by domain (finops, security, sre), severity, service or account to see the rest.');
  parts.push('Ask "tell me more about the first one" or "how do I fix it?" for details.');
  return parts.join('\n\n');
};

async function countsOnly(ctx: Ctx): Promise<string> {
  const s = ok(await ctx.box.call<SavingsSummary>('savings_summary', { top: 5 }));
  if (!s) return unavailable(ctx, ['list_findings'], 'list the open findings');
  return [
    `There are ${s.open_findings} open findings. By domain: ${breakdown(s.by_domain, ['finops', 'security', 'sre'])}. By severity: ${breakdown(s.by_severity, ['critical', 'high', 'medium', 'low', 'info'])}.`,
    `The findings with the largest savings:\n${numbered(s.top_recommendations.map((r) => `${r.title} — saves ${money(r.monthly_savings)}/month — finding ${r.finding_id}`))}`,
    `(\`list_findings\` is not available in this turn, so I cannot list the findings by severity.)`,
  ].join('\n\n');
}

/** "What could save the most?" — the savings at stake and the findings that carry them. */
export const savings: Handler = async (ctx) => {
  const { box, req } = ctx;
  if (!box.has('savings_summary') && !box.has('list_findings'))
    return unavailable(ctx, ['savings_summary', 'list_findings'], 'find what could save the most');
  const f = req.facets;
  const parts: string[] = [];
  const summary = box.has('savings_summary')
    ? ok(await box.call<SavingsSummary>('savings_summary', { top: 10 }))
    : undefined;
  const account = await resolveAccount(ctx, f.account);
  if (account.status === 'unknown')
    return `I found no account ${quoted(ctx, account.text) ? `called ${quoted(ctx, account.text)}` : 'with the id or name you gave'} in the inventory.`;
  const scoped = Boolean(f.service || f.account || f.severity || (f.domain && f.domain !== 'finops'));
  let list: FindingList | undefined;
  if (box.has('list_findings')) {
    list = ok(
      await box.call<FindingList>('list_findings', {
        ...(f.domain ? { domain: f.domain } : {}),
        ...(f.severity ? { severity: f.severity } : {}),
        ...(f.service ? { service: f.service } : {}),
        ...(account.status === 'ok' ? { account_id: account.id } : {}),
        sort_by: 'savings',
        limit: req.limit ?? (scoped && asksAmount(req.prompt.toLowerCase()) ? 50 : 10),
      }),
    );
  }
  // "How many are there, and what would fixing them all save?": the count the question asks for too.
  const lower = req.prompt.toLowerCase();
  const count = scoped || !summary ? list?.total : summary.open_findings;
  if (/\bhow many\b|\bnumber of\b/.test(lower) && count !== undefined) {
    const label = account.status === 'ok' ? account.label : undefined;
    parts.push(`There ${count === 1 ? 'is' : 'are'} ${count} ${scopeText(f, label, count === 1)}.`);
  }
  if (summary && !scoped)
    parts.push(
      `Fixing the open findings could save ${money(summary.monthly_savings)} a month in total (each resource counted once, so alternatives on the same resource are not added up).`,
    );
  // "What would fixing all open payments findings save in total?": the amount for that scope, a tool's sum.
  // None carrying an estimate is an amount too: add_up says $0.00 for them all.
  if (scoped && list && box.has('add_up') && asksAmount(lower) && req.set.kind === 'all') {
    const paying = list.findings.filter((x) => (num(x.monthly_savings) ?? 0) > 0).map((x) => x.id);
    const ids = paying.length ? paying : list.findings.map((x) => x.id);
    const out = ids.length ? ok(await box.call<AddUp>('add_up', { findings: ids })) : undefined;
    const scope = scopeText(f, account.status === 'ok' ? account.label : undefined);
    if (out?.findings.length)
      parts.push(
        paying.length
          ? `Fixing the ${out.findings.length} ${scope} that carry a savings estimate would save ${savedText(out)}.`
          : `Fixing the ${out.findings.length} ${scope} would save ${savedText(out)}.`,
      );
  }
  const recs = new Map((summary?.top_recommendations ?? []).map((r) => [r.finding_id, r]));
  const paying = (list?.findings ?? []).filter((x) => (num(x.monthly_savings) ?? 0) > 0);
  if (list) {
    if (!paying.length) {
      parts.push(
        `None of the ${scopeText(f, account.status === 'ok' ? account.label : undefined)} carries a savings estimate.`,
      );
    } else {
      parts.push(
        `The findings that save the most${scoped ? ` (${scopeText(f, account.status === 'ok' ? account.label : undefined)})` : ''}, largest first:\n` +
          numbered(
            paying.map((x) => {
              const r = recs.get(x.id);
              const how = r ? ` (${r.action}, effort ${r.effort})` : '';
              const saves = x.title.includes(money(x.monthly_savings))
                ? ''
                : ` — saves ${money(x.monthly_savings)}/month`;
              return `${x.title}${saves}${how} — finding ${x.id}`;
            }),
          ),
      );
    }
  } else if (summary) {
    parts.push(
      `The top recommendations:\n${numbered(summary.top_recommendations.map((r) => `${r.title} — saves ${money(r.monthly_savings)}/month (${r.action}, effort ${r.effort}) — finding ${r.finding_id}`))}`,
    );
    parts.push(skippedNote(ctx, ['list_findings'], 'filter or rank the findings themselves') ?? '');
  }
  if (!summary) parts.push(skippedNote(ctx, ['savings_summary'], 'give the total at stake') ?? '');
  parts.push('Ask "how do I fix the first one?" for the steps of any of them.');
  return parts.filter(Boolean).join('\n\n');
};

// ---------------------------------------------------------------- one finding

const STOP = new Set(
  (
    'fix fixes fixing fixed how do does did i we you the a an one ones finding findings issue issues problem ' +
    'problems this that it its to on in of for with and or is are can could should would about remediate ' +
    'remediation resolve mitigate please me tell more what which steps step get rid close address there ' +
    'our my show give explain details detail recommendation recommended way best be by from at'
  ).split(' '),
);

function queryWords(text: string): string[] {
  return [...new Set(words(text).filter((w) => !STOP.has(w) && w.length >= 2))];
}

/** Scores findings against a description: the rarer the shared word across the candidates, the more it counts. */
export function rankFindings(
  pool: FindingSummary[],
  text: string,
  preferred: Set<string> = new Set(),
): Array<{ finding: FindingSummary; score: number }> {
  const q = queryWords(text);
  const docs = pool.map((f) => [...new Set(words(`${f.title} ${f.check_id ?? ''}`))]);
  const df = (w: string) => docs.filter((d) => d.some((x) => wordsMatch(w, x))).length;
  const idf = new Map(q.map((w) => [w, df(w)]));
  return pool
    .map((finding, i) => {
      let score = 0;
      for (const w of q) {
        const n = idf.get(w) ?? 0;
        if (n > 0 && docs[i]!.some((x) => wordsMatch(w, x))) score += Math.log(1 + pool.length / n);
      }
      if (score > 0 && preferred.has(finding.id)) score += 0.5;
      return { finding, score };
    })
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || severityRank(b.finding.severity) - severityRank(a.finding.severity));
}

type FindingPick =
  { status: 'ok'; id: string; others?: FindingSummary[]; via?: string } | { status: 'answer'; text: string };

async function findingFromItem(ctx: Ctx, item: PriorItem, text: string): Promise<FindingPick> {
  if (item.kind === 'finding') return { status: 'ok', id: item.id };
  const r = ok(await ctx.box.call<ResourceDetail | NotFound>('get_resource', { resource: item.id }));
  if (!r?.found) return { status: 'answer', text: `I could not find ${item.id} in the inventory any more.` };
  return fromResourceFindings(r, text);
}

function fromResourceFindings(r: ResourceDetail, text: string): FindingPick {
  const open = bySeverity(r.open_findings);
  if (!open.length)
    return { status: 'answer', text: `${label(r)} has no open findings, so there is nothing to fix on it.` };
  const ranked = rankFindings(open, text);
  const chosen = ranked[0]?.finding ?? open[0]!;
  const others = open.filter((x) => x.id !== chosen.id);
  return { status: 'ok', id: chosen.id, others, via: label(r) };
}

/** Which finding a question means: by id, by check, by position in the previous answer, by resource, or by words. */
async function whichFinding(ctx: Ctx): Promise<FindingPick> {
  const { req, box } = ctx;
  const byId = req.ids.find((i) => i.kind === 'finding');
  if (byId) return { status: 'ok', id: byId.id };
  const text = req.target ?? '';
  const prior = req.prior;
  if (prior && req.reference && (!queryWords(text).length || req.reference.kind === 'ordinal')) {
    const item =
      req.reference.kind === 'ordinal'
        ? prior.items.at(req.reference.index)
        : (prior.subject ?? prior.items[0]);
    if (item) return findingFromItem(ctx, item, text);
    return {
      status: 'answer',
      text: 'I could not tell which finding you mean: my previous answer listed none. Name it by its id or describe it (a resource name, or words from its title).',
    };
  }
  if (!box.has('list_findings') && !req.checks.length) {
    // Without the list, a resource named in the question can still lead to its findings.
    if (box.has('get_resource')) {
      for (const ref of candidatesOf(text).slice(0, 2)) {
        const r = ok(await box.call<ResourceDetail | NotFound>('get_resource', { resource: ref }));
        if (r?.found) return fromResourceFindings(r, text);
      }
    }
    return { status: 'answer', text: unavailable(ctx, ['list_findings'], 'find the finding you describe') };
  }
  const pool = await allFindings(ctx);
  if (req.checks.length) {
    const matching = pool.filter((x) => x.check_id && req.checks.includes(x.check_id));
    if (!matching.length)
      return { status: 'answer', text: `There is no open finding of check ${req.checks.join(', ')}.` };
    const ranked = rankFindings(matching, text.replace(/\b(?:finops|security|sre)\.[a-z0-9_]+\b/g, ' '));
    const chosen = ranked[0]?.finding ?? matching[0]!;
    return { status: 'ok', id: chosen.id, others: matching.filter((x) => x.id !== chosen.id) };
  }
  const preferred = new Set((prior?.items ?? []).filter((i) => i.kind === 'finding').map((i) => i.id));
  const ranked = rankFindings(pool, text, preferred);
  const best = ranked[0];
  if (!best) {
    if (prior?.subject && !queryWords(text).length) return findingFromItem(ctx, prior.subject, text);
    if (!prior && isReferenceOnly(text)) {
      const top = bySeverity(pool).slice(0, 5);
      return {
        status: 'answer',
        text:
          'Which finding do you mean? There is no earlier answer in this conversation to refer to: name the finding by its id, or describe it with words from its title (a resource name, a port, a volume type).' +
          (top.length ? `\nThe most severe open findings:\n${numbered(top.map((x) => findingLine(x)))}` : ''),
      };
    }
    const top = bySeverity(pool).slice(0, 5);
    return {
      status: 'answer',
      text:
        `I could not tell which finding you mean${quoted(ctx, text) ? ` by ${quoted(ctx, text)}` : ''}: no open finding's title matches those words. ` +
        `Name it by its id, or use words from its title (a resource name, a port, a volume type).` +
        (top.length ? `\nThe most severe open findings:\n${numbered(top.map((x) => findingLine(x)))}` : ''),
    };
  }
  const ties = ranked.filter((r) => r !== best && best.score - r.score < 1e-9).map((r) => r.finding);
  return { status: 'ok', id: best.finding.id, others: ties };
}

function dedent(sql: string): string {
  const lines = sql
    .replace(/^\s*\n/, '')
    .replace(/\s+$/, '')
    .split('\n');
  const indents = lines.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length);
  const cut = Math.min(...indents, 80);
  return lines.map((l) => l.slice(Math.min(cut, /^\s*/.exec(l)![0].length))).join('\n');
}

function resourceLine(r: FindingDetail['resources'][number]): string {
  const cost = num(r.monthly_cost);
  const bits = [
    r.type ?? 'resource',
    cost !== null ? `costs ${money(cost)}/month` : null,
    r.action ? `action: ${r.action}` : null,
  ].filter(Boolean);
  return `${label(r)} — ${bits.join(', ')}${r.console_url ? ` — console: ${r.console_url}` : ''}`;
}

function recommendationText(f: FindingDetail): string {
  const rec = f.recommendation;
  if (!rec) return 'This finding carries no recommendation.';
  const saves = num(rec.savings) ? `, saves ${money(rec.savings)}/month` : '';
  return `Recommendation (${rec.action_type}, effort ${rec.effort}${saves}): ${rec.rationale}`;
}

export function composeFinding(
  f: FindingDetail,
  mode: 'fix' | 'detail',
  others: FindingSummary[] = [],
  via?: string,
): string {
  const parts: string[] = [];
  const head = `«${f.title}» (finding ${f.id}; ${f.severity} ${f.domain}, ${f.status})`;
  if (mode === 'fix') {
    parts.push(`How to fix ${head}${via ? `, the most relevant open finding on ${via}` : ''}:`);
    parts.push(recommendationText(f));
    if (f.narrative) parts.push(`Why it matters: ${f.narrative}`);
  } else {
    parts.push(`${head}${via ? `, on ${via}` : ''}.`);
    if (f.narrative) parts.push(f.narrative);
    if (f.reasoning) parts.push(`How it was established: ${f.reasoning}`);
    parts.push(recommendationText(f));
  }
  if (f.resources.length) {
    const shown = f.resources.slice(0, 8);
    parts.push(
      `Resources${shown.length < f.resources.length ? ` (${f.resources.length} in all, the first of them here)` : ''}:\n${bullets(shown.map(resourceLine))}`,
    );
  }
  const evidence = f.evidence.filter((e) => e.query_sql);
  if (mode === 'fix' && evidence.length) {
    const e = evidence[0]!;
    const rows = num(e.rows) !== null ? `, ${e.rows} ${e.rows === 1 ? 'row' : 'rows'}` : '';
    parts.push(
      `Evidence: the query that found it (step ${e.seq}, "${e.title}"${rows}); re-run it to check the fix:\n\`\`\`sql\n${dedent(e.query_sql!)}\n\`\`\``,
    );
  } else if (evidence.length) {
    parts.push(
      `Evidence (the recorded queries):\n${bullets(evidence.map((e) => `step ${e.seq}: ${e.title}${num(e.rows) !== null ? ` (${e.rows} ${e.rows === 1 ? 'row' : 'rows'})` : ''}`))}\nAsk "how do I fix it?" for the steps and the query itself.`,
    );
  }
  if (others.length) {
    parts.push(
      `${via ? `Other open findings on ${via}` : 'Other findings that match as well'}:\n${bullets(others.slice(0, 6).map((x) => findingLine(x, false)))}`,
    );
  }
  return parts.join('\n\n');
}

async function oneFinding(ctx: Ctx, mode: 'fix' | 'detail'): Promise<string> {
  if (!ctx.box.has('get_finding'))
    return unavailable(
      ctx,
      ['get_finding'],
      mode === 'fix' ? 'give the steps of a fix' : 'show a finding in detail',
    );
  const pick = await whichFinding(ctx);
  if (pick.status === 'answer') return pick.text;
  const result = await ctx.box.call<FindingDetail>('get_finding', { id: pick.id });
  if (result.status !== 'ok')
    return `There is no finding with ${quoted(ctx, pick.id) ? `id ${pick.id}` : 'that id'} among this tenant's findings: it may have been mistyped, or belong to another tenant. Ask "what is open?" for the list.`;
  return composeFinding(result.output, mode, pick.others, pick.via);
}

/** "How do I fix F?" — the recommendation, why, the resources, and the query that found it. */
export const fix: Handler = (ctx) => oneFinding(ctx, 'fix');

/** "Tell me about finding F" — the narrative, the reasoning and the recommendation. */
export const finding: Handler = (ctx) => oneFinding(ctx, 'detail');

// ---------------------------------------------------------------- picks among a previous answer

/** "Which of those is the most expensive?" — ranks the items of the previous answer, each looked up again. */
export const pick: Handler = async (ctx) => {
  const { req, box } = ctx;
  const items = req.prior?.items ?? [];
  if (!items.length)
    return 'I could not tell which items you mean: there is no earlier list in this conversation. Ask for a list first, for example "what is open?" or "what could save the most?".';
  const findings = items.filter((i) => i.kind === 'finding').slice(0, 10);
  if (findings.length) {
    if (!box.has('get_finding')) return unavailable(ctx, ['get_finding'], 'compare those findings');
    const details: FindingDetail[] = [];
    for (const item of findings) {
      const d = ok(await box.call<FindingDetail>('get_finding', { id: item.id }));
      if (d) details.push(d);
    }
    return composePick(details, req.pick ?? 'expensive');
  }
  if (!box.has('get_resource')) return unavailable(ctx, ['get_resource'], 'compare those resources');
  const resources: ResourceDetail[] = [];
  for (const item of items.slice(0, 10)) {
    const r = ok(await box.call<ResourceDetail | NotFound>('get_resource', { resource: item.id }));
    if (r?.found) resources.push(r);
  }
  const costed = resources
    .filter((r) => num(r.monthly_cost) !== null)
    .sort((a, b) => num(b.monthly_cost)! - num(a.monthly_cost)!);
  if (!costed.length) return 'None of the resources in my previous answer has a recorded monthly cost.';
  return (
    `Of the resources in my previous answer, the most expensive is ${label(costed[0]!)}, at ${money(costed[0]!.monthly_cost)} a month.` +
    (costed.length > 1
      ? `\nBy monthly cost:\n${numbered(costed.map((r) => `${label(r)} — ${money(r.monthly_cost)}/month`))}`
      : '')
  );
};

function maxCost(f: FindingDetail): { cost: number; resource?: FindingDetail['resources'][number] } {
  let best: { cost: number; resource?: FindingDetail['resources'][number] } = { cost: -1 };
  for (const r of f.resources) {
    const c = num(r.monthly_cost);
    if (c !== null && c > best.cost) best = { cost: c, resource: r };
  }
  return best;
}

function composePick(details: FindingDetail[], by: 'expensive' | 'savings' | 'severe'): string {
  if (!details.length) return 'None of the findings in my previous answer exists any more.';
  const savingsOf = (f: FindingDetail) => num(f.recommendation?.savings) ?? 0;
  const ranked = [...details].sort((a, b) => {
    if (by === 'severe') return severityRank(b.severity) - severityRank(a.severity);
    if (by === 'savings') return savingsOf(b) - savingsOf(a) || maxCost(b).cost - maxCost(a).cost;
    return maxCost(b).cost - maxCost(a).cost || savingsOf(b) - savingsOf(a);
  });
  const describe = (f: FindingDetail) => {
    const m = maxCost(f);
    const bits: string[] = [];
    if (m.resource) bits.push(`${label(m.resource)} costs ${money(m.cost)}/month`);
    if (savingsOf(f) > 0) bits.push(`fixing it saves ${money(savingsOf(f))}/month`);
    return bits.join('; ');
  };
  const top = ranked[0]!;
  if (by !== 'severe' && maxCost(top).cost < 0 && savingsOf(top) === 0)
    return `None of the findings in my previous answer is on a resource with a recorded cost, and none carries savings, so none is more expensive than another.\n${numbered(details.map((f) => `${f.title} — finding ${f.id}`))}`;
  const criterion = {
    expensive: 'most expensive',
    savings: 'one that saves the most',
    severe: 'most severe',
  }[by];
  const lines = ranked.slice(0, 5).map((f) => {
    const d = describe(f);
    return `[${f.severity} · ${f.domain}] ${f.title}${d ? ` — ${d}` : ''} — finding ${f.id}`;
  });
  const d = describe(top);
  const second = ranked[1];
  const same =
    by === 'expensive' &&
    second &&
    maxCost(top).resource &&
    maxCost(top).resource?.arn === maxCost(second).resource?.arn
      ? ` The next one is on the same resource: the two are alternatives (${second.recommendation?.action_type ?? 'another action'} instead of ${top.recommendation?.action_type ?? 'this one'}), so their savings do not add up.`
      : '';
  return (
    `Of the findings in my previous answer, the ${criterion} is «${top.title}» (finding ${top.id})${d ? `: ${d}` : ''}.${same}` +
    `\n\nRanked${by === 'expensive' ? ' by the monthly cost of the resources they are on' : by === 'savings' ? ' by savings' : ' by severity'}:\n${numbered(lines)}`
  );
}

// ---------------------------------------------------------------- questions no intent names

/**
 * A question about the tenant's cloud that no intent of the table names ("which IAM users have old access
 * keys?", "are any buckets public?"): the open findings whose titles share its rarest words, best first;
 * else what a resource it names says; else it says it could not tell. Undefined when nothing matched.
 */
export async function matchingFindings(ctx: Ctx): Promise<string | undefined> {
  if (!ctx.box.has('list_findings')) return undefined;
  const pool = await allFindings(ctx);
  const ranked = rankFindings(pool, ctx.req.prompt);
  const best = ranked[0]?.score ?? 0;
  if (best < 3) return undefined;
  const top = ranked.filter((r) => r.score >= best * 0.6).slice(0, 8);
  return `The open findings that match what you asked (by the words of their titles), best match first:\n${numbered(top.map((r) => findingLine(r.finding)))}\nAsk "how do I fix the first one?" for its steps.`;
}
