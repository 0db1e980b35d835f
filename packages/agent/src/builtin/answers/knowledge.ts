/** Learnings and runbooks, each cited by id, with what the data says when they say nothing; help. */
import type { FindingDetail, FindingList, LearningList, RecentAlerts, RunbookList } from '../shapes';
import { ok } from '../toolbox';
import { when } from '../text';
import { composeFinding, rankFindings } from './findings';
import { serviceAnswer } from './resources';
import {
  allFindings,
  bullets,
  bySeverity,
  findingLine,
  numbered,
  quoted,
  resolveResource,
  unavailable,
  unresolvedAnswer,
  type Ctx,
  type Handler,
} from './common';

const OUTAGE = /\b(?:outages?|incidents?|downtime|last night|yesterday|last week|alerts?)\b/;

/** The topic of a question: a service it names, else its target words. */
function topicOf(ctx: Ctx): string | undefined {
  const t = ctx.req.facets.service ?? ctx.req.target;
  if (!t) return undefined;
  const cleaned = t
    .replace(/\b(?:the|our|service|last|week'?s?|yesterday'?s?|outages?|incidents?)\b/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned || undefined;
}

async function recentAlertsSection(ctx: Ctx, service?: string): Promise<string | undefined> {
  if (!ctx.box.has('recent_alerts')) return undefined;
  const out = ok(await ctx.box.call<RecentAlerts>('recent_alerts', { days: 7 }));
  const alerts = (out?.alerts ?? []).filter((a) => !service || a.service === service);
  if (!alerts.length) return `No alerts fired${service ? ` for service ${service}` : ''} in the last week.`;
  return (
    `Alerts${service ? ` for service ${service}` : ''} in the last week:\n` +
    bullets(
      alerts.map(
        (a) =>
          `${a.name} (${a.severity ?? 'no severity'}): ${a.occurrences} ${a.occurrences === 1 ? 'occurrence' : 'occurrences'}, first at ${when(a.first_at)}, last at ${when(a.last_at)} — fingerprint ${a.fingerprint}${a.arns?.length ? ` — on ${a.arns.join(', ')}` : ''}`,
      ),
    )
  );
}

/** What the data says about a topic: a service's findings, a resource's findings, or nothing. */
async function whatTheDataSays(ctx: Ctx, topic: string | undefined, withAlerts: boolean): Promise<string[]> {
  const parts: string[] = [];
  if (!topic) {
    if (withAlerts) {
      const a = await recentAlertsSection(ctx);
      if (a) parts.push(`What the data does show instead. ${a}`);
    }
    return parts;
  }
  if (ctx.req.facets.service && ctx.box.has('list_findings')) {
    const service = ctx.req.facets.service;
    const list = ok(await ctx.box.call<FindingList>('list_findings', { service, limit: 10 }));
    if (list) {
      parts.push(
        list.total
          ? `What the findings say about service ${service}: there ${list.total === 1 ? 'is' : 'are'} ${list.total} open ${list.total === 1 ? 'finding' : 'findings'} on resources tagged service=${service}, most severe first:\n${numbered(list.findings.map((f) => findingLine(f)))}`
          : `There are no open findings on resources tagged service=${service}.`,
      );
    }
    const a = await recentAlertsSection(ctx, service);
    if (a) parts.push(a);
    return parts;
  }
  if (!ctx.box.has('get_resource')) return parts;
  const res = await resolveResource(ctx, topic);
  if (res.status === 'service') {
    parts.push(`What the data does say: ${await serviceAnswer(ctx, res.service, res.resources)}`);
    const a = await recentAlertsSection(ctx, res.service);
    if (a) parts.push(a);
  } else if (res.status === 'resource') {
    const r = res.resource;
    const open = bySeverity(r.open_findings);
    parts.push(
      open.length
        ? `What the findings say about ${r.name ?? r.arn} (${r.arn}):\n${numbered(open.map((f) => findingLine(f)))}`
        : `${r.name ?? r.arn} (${r.arn}) has no open findings.`,
    );
  } else if (res.status === 'not-found' || res.status === 'ambiguous') {
    parts.push(unresolvedAnswer(ctx, res).replace(', so I cannot say what is wrong with it', ''));
  }
  if (withAlerts && res.status !== 'service') {
    const a = await recentAlertsSection(ctx);
    if (a) parts.push(a);
  }
  return parts;
}

/**
 * "What have we learned about Z?" — the learnings the team recorded about Z (a service by name, else words
 * of the topic), each cited by id; when there are none, says so, then what the findings and alerts say.
 */
export const learnings: Handler = async (ctx) => {
  const topic = topicOf(ctx);
  const outage = OUTAGE.test(ctx.req.prompt.toLowerCase());
  if (!ctx.box.has('list_learnings')) {
    return [
      unavailable(ctx, ['list_learnings'], 'read what the team has recorded'),
      ...(await whatTheDataSays(ctx, topic, outage)),
    ].join('\n\n');
  }
  const service = ctx.req.facets.service;
  // A service is matched by name; other topics by their words, and a topic that matches nothing by its
  // first word alone ("payments database" finds a learning about payments).
  let found: LearningList['learnings'] = [];
  if (service) found = ok(await ctx.box.call<LearningList>('list_learnings', { service }))?.learnings ?? [];
  if (!found.length && topic) {
    found = ok(await ctx.box.call<LearningList>('list_learnings', { query: topic }))?.learnings ?? [];
    const first = topic.split(' ')[0]!;
    if (!found.length && first !== topic)
      found = ok(await ctx.box.call<LearningList>('list_learnings', { query: first }))?.learnings ?? [];
  }
  if (!topic && !service) found = ok(await ctx.box.call<LearningList>('list_learnings', {}))?.learnings ?? [];
  const about = topic ? ` about ${quoted(ctx, topic) ?? 'that'}` : '';
  if (found.length) {
    const list = [
      `What the team has recorded${about} (${found.length === 1 ? 'one learning' : `${found.length} learnings`}, newest first):`,
      bullets(
        found.map(
          (l) =>
            `${l.fact}${l.service ? ` (service ${l.service})` : ''} — learning ${l.id}, taught by ${l.created_by.replace(/^user:/, '')} on ${when(l.created_at)}`,
        ),
      ),
    ].join('\n');
    // After an outage the alerts say what happened; the learnings say what the team made of it.
    return [list, ...(outage ? await whatTheDataSays(ctx, topic, true) : [])].join('\n\n');
  }
  return [
    `No learnings have been recorded${about} yet, so there is nothing the team taught that I could cite (a learning is taught with POST /api/v1/learnings).`,
    ...(await whatTheDataSays(ctx, topic, outage)),
  ].join('\n\n');
};

function runbookBlock(r: RunbookList['runbooks'][number]): string {
  const whose = r.source === 'tenant' ? "the team's own" : 'built in';
  return `${r.title} (runbook ${r.id}, ${whose}${r.service ? `, for service ${r.service}` : ''}):\n${numbered(r.steps)}`;
}

function otherRunbooks(list: RunbookList['runbooks']): string[] {
  return list.length
    ? [`Other runbooks that apply: ${list.map((r) => `${r.title} (runbook ${r.id})`).join('; ')}.`]
    : [];
}

/**
 * "Is there a runbook for X?" — from the runbooks tool: for a resource, the runbooks of its most severe
 * open finding (and that finding's own recommendation), else those for its type; for a service, the
 * team's runbooks for it; with no topic, every runbook by title. Each runbook is cited by id.
 */
export const runbook: Handler = async (ctx) => {
  const topic = topicOf(ctx);
  if (!ctx.box.has('runbooks')) return unavailable(ctx, ['runbooks'], 'look up runbooks');
  const call = async (input: Record<string, unknown>) =>
    ok(await ctx.box.call<RunbookList>('runbooks', input))?.runbooks ?? [];
  if (topic && ctx.box.has('get_resource')) {
    const res = await resolveResource(ctx, topic);
    if (res.status === 'resource') {
      const r = res.resource;
      const name = r.name ?? r.arn;
      if (r.open_findings.length) {
        const top = bySeverity(r.open_findings)[0]!;
        const found = await call({ finding_id: top.id });
        const parts = [
          `${name} (${r.arn}) has ${r.open_findings.length} open ${r.open_findings.length === 1 ? 'finding' : 'findings'}; the most severe is ${findingLine(top, false)}.`,
          found.length ? `The runbook for it: ${runbookBlock(found[0]!)}` : 'No runbook applies to it.',
          ...otherRunbooks(found.slice(1)),
        ];
        if (ctx.box.has('get_finding')) {
          const f = ok(await ctx.box.call<FindingDetail>('get_finding', { id: top.id }));
          if (f)
            parts.push(
              `The finding's own recommendation:\n${composeFinding(f, 'fix', [], r.name ?? undefined)}`,
            );
        }
        return parts.join('\n\n');
      }
      const found = r.type ? await call({ resource_type: r.type }) : [];
      return [
        `${name} (${r.arn}) has no open findings.`,
        found.length
          ? `The runbook for its type (${r.type}): ${runbookBlock(found[0]!)}`
          : `No runbook applies to its type${r.type ? ` (${r.type})` : ''}.`,
        ...otherRunbooks(found.slice(1)),
      ].join('\n\n');
    }
    if (res.status === 'service') {
      const own = (await call({ service: res.service, limit: 20 })).filter((x) => x.service);
      return [
        own.length
          ? `The team's runbooks for service ${res.service}:\n\n${own.map(runbookBlock).join('\n\n')}`
          : `The team has written no runbook for service ${res.service}; the built-in ones apply per finding (ask "is there a runbook for <resource>?").`,
        `What the data does say: ${await serviceAnswer(ctx, res.service, res.resources)}`,
      ].join('\n\n');
    }
    if (res.status === 'not-found' || res.status === 'ambiguous') {
      // "a runbook for RDS without backups": the finding those words describe, and its runbooks.
      const top = ctx.box.has('list_findings') ? rankFindings(await allFindings(ctx), topic)[0] : undefined;
      if (top && top.score >= 3) {
        const found = await call({ finding_id: top.finding.id });
        return [
          `The open finding that matches ${quoted(ctx, topic) ?? 'what you asked'} best is ${findingLine(top.finding, false)}.`,
          found.length ? `The runbook for it: ${runbookBlock(found[0]!)}` : 'No runbook applies to it.',
          ...otherRunbooks(found.slice(1)),
        ].join('\n\n');
      }
      return unresolvedAnswer(ctx, res);
    }
  }
  const all = await call({ limit: 20 });
  return all.length
    ? `The runbooks (${all.length}):\n${bullets(all.map((r) => `${r.title} (runbook ${r.id}${r.service ? `, service ${r.service}` : ''}): ${r.steps.length} steps`))}\nAsk "is there a runbook for <resource>?" for the one that applies to it.`
    : 'There are no runbooks.';
};

const CAPABILITIES = [
  'what is open (overall, or by domain finops/security/sre, severity, service tag or account)',
  'what costs the most and what could save the most',
  'what is wrong with a resource (by name, native id or ARN)',
  'what happened last night, or in an incident (from the alerts and the changes around them)',
  'what changed since yesterday, and who changed it (CloudTrail)',
  'how to fix a finding (its recommendation and the query that found it)',
  'which runbook applies to a resource or a service',
  'what depends on a resource (its blast radius) and what it is connected to',
  'what breaks if a resource or an availability zone fails, and what our single points of failure and toxic combinations are',
  'how many resources of a kind there are',
];

export const help: Handler = async () =>
  `I am the built-in offline engine: I answer from your inventory, findings, alerts and changes through read-only tools, and cite the ids I rely on. I can tell you:\n${bullets(CAPABILITIES)}\nFollow-ups work too: "and the security ones?", "which of those is the most expensive?", "tell me more about the first one".`;

export const unknown: Handler = async (ctx) =>
  ctx.req.prompt
    ? `I can't answer that from this tenant's data: it matches nothing I can see for this tenant (its inventory, findings, incidents, changes, costs and learnings), so I did not guess. I can answer:\n${bullets(CAPABILITIES)}`
    : `The message was empty, so I looked nothing up. I can answer:\n${bullets(CAPABILITIES)}`;
