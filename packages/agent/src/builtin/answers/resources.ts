/** Resources: what is wrong with one, what depends on it, what it is connected to, what costs the most, how many there are. */
import { isReferenceOnly } from '../parse';
import type {
  LearningList,
  BlastRadius,
  FindingList,
  GraphRisksOut,
  Neighbours,
  NotFound,
  RecentChanges,
  ResourceDetail,
  ResourceRow,
  SavingsSummary,
  WhatIfOut,
} from '../shapes';
import { ok } from '../toolbox';
import { actorName, idsIn, money, num, when, words } from '../text';
import {
  alsoNamedNote,
  resourceOfFinding,
  bullets,
  bySeverity,
  candidatesOf,
  findingLine,
  label,
  literal,
  numbered,
  quoted,
  resolveAccount,
  resolveResource,
  skippedNote,
  sql,
  typeHint,
  unavailable,
  unresolvedAnswer,
  type Ctx,
  type Handler,
  type Resolution,
} from './common';
import { finding } from './findings';

/** Attributes worth showing when present, in this order. */
const KEY_SETTINGS = [
  'instance_type',
  'instance_state',
  'class',
  'engine',
  'engine_version',
  'multi_az',
  'publicly_accessible',
  'backup_retention_period',
  'deletion_protection',
  'storage_encrypted',
  'volume_type',
  'size',
  'iops',
  'encrypted',
  'state',
  'scheme',
  'desired_capacity',
  'min_size',
  'max_size',
  'mfa_enabled',
  'password_enabled',
  'status',
  'billing_mode',
  'automatic_failover',
];

function settingsOf(attributes: Record<string, unknown> | null | undefined): string {
  if (!attributes) return '';
  return KEY_SETTINGS.filter((k) => ['string', 'number', 'boolean'].includes(typeof attributes[k]))
    .map((k) => `${k} ${String(attributes[k])}`)
    .join(', ');
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

/** The thing a question is about, from its ids, its reference to the previous answer, or its words. */
type Subject =
  | { kind: 'ref'; ref: string }
  | { kind: 'finding'; id: string }
  | { kind: 'text'; text: string }
  | { kind: 'none' };

function subjectOf(ctx: Ctx): Subject {
  const { req } = ctx;
  const id = req.ids[0];
  if (id) return id.kind === 'finding' ? { kind: 'finding', id: id.id } : { kind: 'ref', ref: id.id };
  if (req.prior && (isReferenceOnly(req.target) || (req.reference && !req.target))) {
    const ref = req.reference;
    const item =
      ref?.kind === 'ordinal' ? req.prior.items.at(ref.index) : (req.prior.subject ?? req.prior.items[0]);
    if (item)
      return item.kind === 'finding' ? { kind: 'finding', id: item.id } : { kind: 'ref', ref: item.id };
  }
  if (req.target && !isReferenceOnly(req.target)) return { kind: 'text', text: req.target };
  if (req.facets.service) return { kind: 'text', text: req.facets.service };
  return { kind: 'none' };
}

async function resolveSubject(ctx: Ctx, subject: Subject): Promise<Resolution> {
  if (subject.kind === 'ref') return resolveResource(ctx, subject.ref);
  if (subject.kind === 'text') return resolveResource(ctx, subject.text);
  return { status: 'nothing' };
}

/** "What is wrong with X?" — the resource, its open findings, its recent changes and who made them. */
export const resource: Handler = async (ctx) => {
  const subject = subjectOf(ctx);
  if (subject.kind === 'finding') {
    ctx.req.ids = [{ kind: 'finding', id: subject.id, at: 0 }];
    return finding(ctx);
  }
  if (subject.kind === 'none')
    return 'Which resource do you mean? Name it by its name, native id (vol-…, i-…, sg-…) or ARN, for example "what is wrong with prod-payments-db?".';
  if (!ctx.box.has('get_resource')) return unavailable(ctx, ['get_resource'], 'look up a resource');
  const res = await resolveSubject(ctx, subject);
  if (res.status === 'service') return serviceAnswer(ctx, res.service, res.resources);
  if (res.status === 'type') return typeAnswer(ctx, res.type, res.name, res.resources);
  if (res.status === 'unavailable') return unavailable(ctx, res.tools, 'look up a resource');
  if (res.status !== 'resource') return unresolvedAnswer(ctx, res);
  return resourceAnswer(ctx, res.resource, res.alsoNamed);
};

/** "What is wrong with our databases?" — the resources of a kind, the most expensive first, with their open findings. */
async function typeAnswer(ctx: Ctx, type: string, name: string, rows: ResourceRow[]): Promise<string> {
  if (!rows.length) return `There are no ${name} (${type}) in the inventory.`;
  const shown = rows.slice(0, 6);
  const lines: string[] = [];
  for (const row of shown) {
    const r = ok(await ctx.box.call<ResourceDetail | NotFound>('get_resource', { resource: row.arn }));
    const cost = num(row.monthly_cost);
    const head = `${label(row)}${cost !== null ? ` — ${money(cost)}/month` : ''}`;
    if (!r?.found) {
      lines.push(head);
      continue;
    }
    const open = bySeverity(r.open_findings);
    lines.push(
      open.length
        ? `${head} — ${open.length} open ${open.length === 1 ? 'finding' : 'findings'}, the most severe: [${open[0]!.severity} · ${open[0]!.domain}] ${open[0]!.title} — finding ${open[0]!.id}`
        : `${head} — no open findings`,
    );
  }
  const intro =
    rows.length < 10
      ? `There ${rows.length === 1 ? 'is' : 'are'} ${rows.length} ${name} (${type}) in the inventory`
      : `Here are the ${rows.length} most expensive ${name} (${type}) of the inventory`;
  return (
    `${intro}, the most expensive first, with what is open on ${shown.length < rows.length ? 'the most expensive of them' : 'each'}:\n${numbered(lines)}` +
    '\n\nAsk about one of them by name for the full picture.'
  );
}

async function resourceAnswer(ctx: Ctx, r: ResourceDetail, alsoNamed?: ResourceRow[]): Promise<string> {
  const { box, req } = ctx;
  const parts: string[] = [];
  const where = [r.account_id ? `account ${r.account_id}` : null, r.availability_zone ?? r.region].filter(
    Boolean,
  );
  const service = r.tags?.service;
  const cost = num(r.monthly_cost);
  parts.push(
    `${label(r)} is ${article(r.type ?? 'resource')} ${r.type ?? 'resource'}${where.length ? ` in ${where.join(', ')}` : ''}` +
      `${service ? `, tagged service=${service}` : ''}. ` +
      (cost !== null ? `It costs ${money(cost)} a month.` : 'No monthly cost is recorded for it.') +
      (label(r).includes(r.arn) ? '' : ` ARN: ${r.arn}`),
  );
  const settings = settingsOf(r.attributes);
  if (settings) parts.push(`Settings: ${settings}.`);
  const f = req.facets;
  const filtered = !!(f.domain || f.severity);
  const open = bySeverity(
    r.open_findings.filter(
      (x) => (!f.domain || x.domain === f.domain) && (!f.severity || x.severity === f.severity),
    ),
  );
  const kind = [f.severity, f.domain].filter(Boolean).join(' ');
  if (!open.length) {
    parts.push(
      filtered
        ? `It has no open ${kind} findings.`
        : 'It has no open findings: no detector flags anything on it today.',
    );
  } else {
    parts.push(
      `${filtered ? `Its open ${kind} findings` : `It has ${r.open_findings.length} open ${r.open_findings.length === 1 ? 'finding' : 'findings'}`}, most severe first:\n` +
        numbered(open.map((x) => findingLine(x))),
    );
  }
  if (r.recent_changes.length) {
    parts.push(
      `Changes the inventory recorded:\n${bullets(r.recent_changes.map((c) => `${when(c.observed_at)}: ${c.change}${c.changed_fields?.length ? ` (${c.changed_fields.join(', ')})` : ''}`))}`,
    );
  }
  if (box.has('recent_changes')) {
    const recent = ok(await box.call<RecentChanges>('recent_changes', { days: 7 }));
    const events = (recent?.cloudtrail ?? []).filter((e) => e.arns?.includes(r.arn));
    if (events.length)
      parts.push(
        `Who changed it in the last week (CloudTrail):\n${bullets(events.map((e) => `${when(e.at)}: ${actorName(e.actor)} (${e.actor}) ran ${e.name}${e.source_ip ? ` from ${e.source_ip}` : ''}`))}`,
      );
  } else {
    parts.push(skippedNote(ctx, ['recent_changes'], 'say who changed it') ?? '');
  }
  // What the team taught about the resource's service is part of what is wrong with it (a known
  // month-end peak, a change window): cited by id, so the use is counted.
  if (service && box.has('list_learnings')) {
    const taught = ok(await box.call<LearningList>('list_learnings', { service, limit: 5 }))?.learnings ?? [];
    if (taught.length)
      parts.push(
        `What the team has recorded about service ${service}:\n${bullets(taught.map((l) => `${l.fact} — learning ${l.id}`))}`,
      );
  }
  if (r.console_url) parts.push(`Console: ${r.console_url}`);
  const also = alsoNamedNote(alsoNamed);
  if (also) parts.push(also);
  if (open.length)
    parts.push(
      'Ask "how do I fix the first one?" for the steps, or "what depends on it?" for its blast radius.',
    );
  return parts.filter(Boolean).join('\n\n');
}

/** A name that is a service tag rather than one resource: the findings on the resources tagged with it. */
export async function serviceAnswer(ctx: Ctx, service: string, resources: ResourceRow[]): Promise<string> {
  const { box, req } = ctx;
  const parts: string[] = [];
  const shown = resources.slice(0, 8);
  parts.push(
    `"${service}" is a service tag: ${resources.length >= 50 ? 'at least ' : ''}${resources.length} ${resources.length === 1 ? 'resource is' : 'resources are'} tagged service=${service}, the most expensive being:\n` +
      bullets(
        shown.map(
          (r) =>
            `${label(r)} — ${r.type ?? 'resource'}${num(r.monthly_cost) !== null ? `, ${money(r.monthly_cost)}/month` : ''}`,
        ),
      ),
  );
  if (!box.has('list_findings')) {
    parts.push(skippedNote(ctx, ['list_findings'], 'list the findings on them') ?? '');
    return parts.join('\n\n');
  }
  const list = ok(
    await box.call<FindingList>('list_findings', {
      service,
      ...(req.facets.domain ? { domain: req.facets.domain } : {}),
      ...(req.facets.severity ? { severity: req.facets.severity } : {}),
      limit: 15,
    }),
  );
  if (!list) return parts.join('\n\n');
  const kind = [req.facets.severity, req.facets.domain].filter(Boolean).join(' ');
  parts.push(
    list.total === 0
      ? `There are no open ${kind ? `${kind} ` : ''}findings on resources tagged service=${service}.`
      : `There ${list.total === 1 ? 'is' : 'are'} ${list.total} open ${kind ? `${kind} ` : ''}${list.total === 1 ? 'finding' : 'findings'} on them, most severe first:\n${numbered(list.findings.map((x) => findingLine(x)))}`,
  );
  return parts.join('\n\n');
}

async function graphSubject(
  ctx: Ctx,
  tool: 'blast_radius' | 'resource_neighbours',
): Promise<{ output: BlastRadius | Neighbours; note?: string | undefined } | { answer: string }> {
  const { box } = ctx;
  let subject = subjectOf(ctx);
  const which =
    'Which resource do you mean? Name it by its name, native id or ARN, for example "what depends on prod-payments-db?".';
  if (subject.kind === 'none') return { answer: which };
  if (subject.kind === 'finding') {
    // "what depends on it?" after a finding: the resource the finding is about.
    const arn = await resourceOfFinding(ctx, subject.id);
    if (!arn) return { answer: which };
    subject = { kind: 'ref', ref: arn };
  }
  const graph = async (ref: string) => {
    const out = ok(await box.call<BlastRadius | Neighbours | NotFound>(tool, { resource: ref }));
    return out && !('found' in out) ? out : undefined;
  };
  // An id or ARN names one resource: ask the graph directly. A name may be shared, so it is resolved first.
  const direct = subject.kind === 'ref' ? subject.ref : undefined;
  if (direct && idsIn(direct).length) {
    const out = await graph(direct);
    if (out) return { output: out };
  }
  if (!box.has('get_resource')) {
    const first = subject.kind === 'ref' ? subject.ref : candidatesOf(subject.text)[0];
    const out = first ? await graph(first) : undefined;
    if (out) return { output: out };
    return {
      answer: `I found no resource ${quoted(ctx, first) ? `called ${quoted(ctx, first)}` : 'with the name or id you gave'} in the inventory by its exact name, native id or ARN.`,
    };
  }
  const res = await resolveSubject(ctx, subject);
  if (res.status === 'service' || res.status === 'type')
    return {
      answer: `${res.status === 'service' ? `"${res.service}" is a service tag` : `"${res.name}" is a kind of resource`} covering several resources, not one resource. Name one of them, for example ${res.resources
        .slice(0, 3)
        .map((r) => label(r))
        .join(', ')}.`,
    };
  if (res.status !== 'resource') return { answer: unresolvedAnswer(ctx, res) };
  const out = await graph(res.resource.arn);
  if (!out) return { answer: `The graph has no entry for ${label(res.resource)}.` };
  return { output: out, note: alsoNamedNote(res.alsoNamed) };
}

/** An availability zone named in a question ("us-east-1a"). */
const AZ_RE = /\b([a-z]{2}(?:-gov)?-[a-z]+-\d[a-z])\b/;

/** "What breaks if us-east-1a fails?" — the what-if of losing a zone, from the graph. */
async function zoneLoss(ctx: Ctx, az: string): Promise<string> {
  if (!ctx.box.has('what_if')) return unavailable(ctx, ['what_if'], 'work out what losing a zone takes down');
  const out = ok(await ctx.box.call<WhatIfOut>('what_if', { availability_zone: az }));
  if (!out) return 'The what-if could not be computed in this turn.';
  if (out.found === false)
    return `The inventory has no resource in ${quoted(ctx, az) ?? 'that availability zone'}, so losing it would take nothing down.`;
  const parts = [
    `If ${out.availability_zone} failed, ${out.fails_count} ${out.fails_count === 1 ? 'resource' : 'resources'} outside it would fail with it, from the dependency graph (pools respected: a target group keeps serving while one of its targets does).`,
  ];
  if (out.lost_in_zone?.length)
    parts.push(
      `Lost with the zone itself (in ${out.availability_zone}, no standby elsewhere):\n${bullets(out.lost_in_zone.map((r) => `${label(r)} — ${r.type}`))}`,
    );
  if (out.services_down.length)
    parts.push(
      `Services that go down (load balancers left with no working target):\n${bullets(out.services_down.map((r) => `${label(r)} — via ${r.via.join(' → ')}`))}`,
    );
  else parts.push('No load balancer loses all of its targets.');
  const other = out.fails.filter((r) => r.type !== 'aws_ec2_application_load_balancer').slice(0, 25);
  if (other.length)
    parts.push(
      `What fails with it:\n${bullets(other.map((r) => `${label(r)} — ${r.type}, depth ${r.depth}`))}`,
    );
  if (out.degraded_count)
    parts.push(
      `Degraded but still serving (${out.degraded_count}, groups and pools that keep part of their capacity):\n${bullets(
        [...out.degraded]
          .sort(
            (a, b) =>
              Number(b.type === 'aws_ec2_autoscaling_group') - Number(a.type === 'aws_ec2_autoscaling_group'),
          )
          .slice(0, 20)
          .map((r) => `${label(r)} — ${r.type}`),
      )}`,
    );
  return parts.join('\n\n');
}

/** "What depends on X?" / "What breaks if X fails?" — the dependents by depth, and whether each fails. */
export const blast: Handler = async (ctx) => {
  const az = AZ_RE.exec(ctx.req.prompt.toLowerCase())?.[1];
  if (az) return zoneLoss(ctx, az);
  if (!ctx.box.has('blast_radius')) return unavailable(ctx, ['blast_radius'], 'work out what depends on it');
  const got = await graphSubject(ctx, 'blast_radius');
  if ('answer' in got) return got.answer;
  const b = got.output as BlastRadius;
  const subject = label(b.resource);
  const note = got.note ? `\n\n${got.note}` : '';
  if (!b.count)
    return `Nothing in the dependency graph depends on ${subject} (within three hops): no resource needs it, so its failure or deletion would take nothing else down that the inventory knows of.${note}`;
  const byDepth = new Map<number, BlastRadius['dependents']>();
  for (const d of b.dependents) byDepth.set(d.depth, [...(byDepth.get(d.depth) ?? []), d]);
  const fails = b.fails ?? b.dependents.filter((d) => d.impact !== 'degraded').length;
  const parts = [
    `If ${subject} failed or were deleted, ${b.count} ${b.count === 1 ? 'resource' : 'resources'} would be affected, from the dependency graph (within three hops)` +
      (fails === b.count
        ? ':'
        : `; ${fails} would fail outright and ${b.count - fails} would be degraded (they keep part of a pool):`),
  ];
  let shown = 0;
  for (const [depth, rows] of [...byDepth.entries()].sort((a, c) => a[0] - c[0])) {
    const take = rows.slice(0, Math.max(0, 40 - shown));
    shown += take.length;
    if (!take.length) break;
    parts.push(
      `Depth ${depth}${depth === 1 ? ' (directly)' : ''}:\n${bullets(take.map((d) => `${label(d)} — ${d.type ?? 'resource'}${d.impact === 'degraded' ? ' (degraded)' : ''}`))}`,
    );
  }
  if (shown < b.dependents.length) parts.push('(The list goes on; ask about one of them for more.)');
  if (got.note) parts.push(got.note);
  return parts.join('\n\n');
};

/** "What are our single points of failure?" — graph and configuration SPOFs, and toxic combinations. */
export const risks: Handler = async (ctx) => {
  if (!ctx.box.has('graph_risks')) return unavailable(ctx, ['graph_risks'], 'find single points of failure');
  const toxicOnly = /\btoxic\b/.test(ctx.req.prompt.toLowerCase());
  // Each count is the tool's own total for its kind (never a count of the page the engine holds).
  const toxicOut = ok(
    await ctx.box.call<GraphRisksOut>('graph_risks', { kind: 'toxic_combination', limit: 50 }),
  );
  const spofOut = toxicOnly
    ? undefined
    : ok(await ctx.box.call<GraphRisksOut>('graph_risks', { kind: 'spof', limit: 50 }));
  if (!toxicOut || (!toxicOnly && !spofOut)) return 'The risks could not be computed in this turn.';
  if (!toxicOut.total && !spofOut?.total)
    return toxicOnly
      ? 'The graph shows no toxic combination: no Internet-exposed instance reaches a data store with problems in several domains or sensitive data.'
      : 'The graph shows no single point of failure and no toxic combination in the current inventory.';
  const spofs = spofOut?.risks ?? [];
  const toxic = toxicOut.risks;
  const spofTotal = spofOut?.total ?? 0;
  const toxicTotal = toxicOut.total;
  const line = (r: GraphRisksOut['risks'][number]) =>
    `[${r.severity}] ${r.title} — ${r.reason} Resources: ${r.resources
      .slice(0, 4)
      .map((n) => label(n))
      .join(', ')}${r.finding_ids.length ? `. Findings: ${r.finding_ids.slice(0, 4).join(', ')}` : ''}`;
  const parts = [
    toxicOnly
      ? `From the dependency graph of the current inventory: ${toxicTotal} toxic ${toxicTotal === 1 ? 'combination' : 'combinations'}.`
      : `From the dependency graph of the current inventory: ${spofTotal} single ${spofTotal === 1 ? 'point' : 'points'} of failure and ${toxicTotal} toxic ${toxicTotal === 1 ? 'combination' : 'combinations'}, most severe first.`,
  ];
  if (spofs.length && !toxicOnly)
    parts.push(`Single points of failure:\n${numbered(spofs.slice(0, 12).map(line))}`);
  if (toxic.length)
    parts.push(
      `Toxic combinations (security + reliability on connected resources):\n${numbered(toxic.map(line))}`,
    );
  parts.push('Ask "what breaks if <one of them> fails?" for its blast radius.');
  return parts.join('\n\n');
};

/** "What is X connected to?" — its edges, both ways. */
export const neighbours: Handler = async (ctx) => {
  if (!ctx.box.has('resource_neighbours'))
    return unavailable(ctx, ['resource_neighbours'], 'show what it is connected to');
  const got = await graphSubject(ctx, 'resource_neighbours');
  if ('answer' in got) return got.answer;
  const n = got.output as Neighbours;
  const subject = label(n.resource);
  if (!n.neighbours.length)
    return `${subject} has no edges in the graph: nothing is connected to it.${got.note ? `\n\n${got.note}` : ''}`;
  const groups = new Map<string, Neighbours['neighbours']>();
  for (const e of n.neighbours) {
    const key = `${e.direction === 'out' ? 'out' : 'in'} ${e.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const parts = [
    `${subject} has ${n.neighbours.length} ${n.neighbours.length === 1 ? 'connection' : 'connections'} in the graph:`,
  ];
  for (const [key, rows] of groups) {
    const [direction, kind] = key.split(' ') as [string, string];
    const heading =
      direction === 'out' ? `${subject} → ${kind} →` : `→ ${kind} → ${subject} (these point at it)`;
    parts.push(`${heading}\n${bullets(rows.map((e) => `${label(e)} — ${e.type ?? 'resource'}`))}`);
  }
  if (got.note) parts.push(got.note);
  return parts.join('\n\n');
};

/** "What costs the most?" — the spend by type, the most expensive resources, and the savings at stake. */
const COST_FILLER = new Set(
  (
    'month monthly each every year yearly total cost costs costing spend spending spent paying much what ' +
    'does have with that this there their them they from into about over under most least more less ' +
    'whole entire overall please right currently today service services resource resources thing things ' +
    'together combined altogether numbers added show running'
  ).split(' '),
);

export const costs: Handler = async (ctx) => {
  const { box, req } = ctx;
  if (!box.has('search_resources') && !box.has('inventory_sql'))
    return unavailable(ctx, ['search_resources', 'inventory_sql'], 'find what costs the most');
  const f = req.facets;
  const account = await resolveAccount(ctx, f.account);
  if (account.status === 'unknown')
    return `I found no account ${quoted(ctx, account.text) ? `called ${quoted(ctx, account.text)}` : 'with the id or name you gave'} in the inventory.`;
  // "How much does prod-payments-db cost?": one resource the question names, its own monthly cost.
  if (box.has('get_resource')) {
    const kebab = [...req.prompt.matchAll(/\b[a-z0-9]+(?:[-_.][a-z0-9]+)+\b/gi)].map((m) => m[0]);
    // A plain word of the question can be a name too ("the bastion host"), when it is no kind or filler word.
    const plain = kebab.length
      ? []
      : words(req.target ?? '')
          .filter((w) => w.length >= 4 && !/[-_./]/.test(w) && !COST_FILLER.has(w) && !typeHint(w))
          .slice(0, 2);
    const names = [
      ...req.ids.filter((i) => i.kind !== 'finding').map((i) => i.id),
      ...kebab,
      ...plain,
    ].filter((n) => n.toLowerCase() !== f.service?.toLowerCase() && !/^us-[a-z]+-\d[a-z]?$/i.test(n));
    for (const ref of [...new Set(names)].slice(0, 3)) {
      const r = ok(await box.call<ResourceDetail | NotFound>('get_resource', { resource: ref }));
      if (!r?.found) continue;
      return num(r.monthly_cost) !== null
        ? `${label(r)}, an ${r.type}, costs ${money(r.monthly_cost)} a month (its recorded monthly cost).`
        : `No monthly cost is recorded for ${label(r)} (an ${r.type}).`;
    }
  }
  // "Which service costs the most?": the spend of each service tag, from the inventory.
  if (
    box.has('inventory_sql') &&
    !f.service &&
    /\b(?:which|what) services?\b|\b(?:by|per|each|every) service\b|\bservices? (?:cost|spend)/.test(
      req.prompt.toLowerCase(),
    )
  ) {
    const bySvc = await sql(
      ctx,
      `select tags->>'service' as service, count(*)::int as resources, round(sum(monthly_cost)::numeric, 2) as monthly_cost from resources where deleted_at is null and monthly_cost is not null and tags->>'service' is not null group by 1 order by 3 desc limit 10`,
    );
    if (bySvc?.rows.length) {
      const top = bySvc.rows[0]!;
      return `By service tag, the one that costs the most is ${String(top.service)}, at ${money(top.monthly_cost)} a month. The services by monthly cost, largest first:\n${numbered(bySvc.rows.map((r) => `${String(r.service)} — ${money(r.monthly_cost)}/month over ${String(r.resources)} ${Number(r.resources) === 1 ? 'resource' : 'resources'}`))}`;
    }
  }
  // "our most expensive databases": the type the words imply narrows it (an account is a filter, not a type).
  const hinted = typeHint(req.prompt);
  const type = hinted && hinted[0] !== 'aws_account' ? hinted : undefined;
  const filters = [
    'deleted_at is null',
    ...(type ? [`type = ${literal(type[0])}`] : []),
    ...(f.service ? [`tags->>'service' = ${literal(f.service)}`] : []),
    ...(account.status === 'ok' ? [`account_id = ${literal(account.id)}`] : []),
  ].join(' and ');
  const scope = [
    f.service ? `tagged service=${f.service}` : '',
    account.status === 'ok' ? `in account ${account.label}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const subject = `${type ? `Your ${type[1]}` : 'The inventory'}${scope ? ` ${scope}` : ''}`;
  const parts: string[] = [];
  if (box.has('inventory_sql')) {
    const total = await sql(
      ctx,
      `select round(sum(monthly_cost)::numeric, 2) as monthly_cost, count(*)::int as resources, count(monthly_cost)::int as costed from resources where ${filters}`,
    );
    const byType = type
      ? undefined
      : await sql(
          ctx,
          `select type, count(*)::int as resources, round(sum(monthly_cost)::numeric, 2) as monthly_cost from resources where ${filters} and monthly_cost is not null group by type order by 3 desc limit 6`,
        );
    const t = total?.rows[0];
    if (t && num(t.monthly_cost) !== null)
      parts.push(
        `${subject} ${type ? 'cost' : 'costs'} ${money(t.monthly_cost)} a month across ${String(t.resources)} ${Number(t.resources) === 1 ? 'resource' : 'resources'} (the sum of their monthly costs${Number(t.costed) < Number(t.resources) ? `; ${String(t.costed)} of them carry a cost` : ''}).`,
      );
    if (byType?.rows.length)
      parts.push(
        `By type, the largest first:\n${numbered(byType.rows.map((r) => `${String(r.type)} — ${money(r.monthly_cost)}/month over ${String(r.resources)} ${Number(r.resources) === 1 ? 'resource' : 'resources'}`))}`,
      );
  } else {
    parts.push(skippedNote(ctx, ['inventory_sql'], 'total the spend by type') ?? '');
  }
  if (box.has('search_resources')) {
    const top = ok(
      await box.call<{ resources: ResourceRow[] }>('search_resources', {
        ...(type ? { type: type[0] } : {}),
        ...(f.service ? { service: f.service } : {}),
        ...(account.status === 'ok' ? { account_id: account.id } : {}),
        limit: 10,
      }),
    );
    const rows = (top?.resources ?? []).filter((r) => num(r.monthly_cost) !== null);
    if (rows.length)
      parts.push(
        `The most expensive resources:\n${numbered(rows.map((r) => `${label(r)} — ${r.type ?? 'resource'}${r.service ? ` (service=${r.service})` : ''} — ${money(r.monthly_cost)}/month`))}`,
      );
  } else {
    parts.push(skippedNote(ctx, ['search_resources'], 'list the most expensive resources') ?? '');
  }
  if (!scope && !type && box.has('savings_summary')) {
    const s = ok(await box.call<SavingsSummary>('savings_summary', { top: 1 }));
    const best = s?.top_recommendations[0];
    if (s)
      parts.push(
        `Open findings could save ${money(s.monthly_savings)} a month of this` +
          (best
            ? `; the largest single saving is «${best.title}» (finding ${best.finding_id}), ${money(best.monthly_savings)}/month.`
            : '.') +
          ' Ask "what could save the most?" for the list.',
      );
  }
  return parts.filter(Boolean).join('\n\n');
};

/** "How many X do we have?" — a count from the inventory, by account and region. */
export const count: Handler = async (ctx) => {
  const { box, req } = ctx;
  if (!box.has('inventory_sql'))
    return unavailable(ctx, ['inventory_sql'], 'count resources in the inventory');
  const hint =
    typeHint(req.target ?? '') ?? typeHint(ctx.req.facets.service ?? '') ?? typeHint(promptOf(ctx));
  const service = req.facets.service ? ` and tags->>'service' = ${literal(req.facets.service)}` : '';
  if (!hint) {
    const r = await sql(
      ctx,
      `select type, count(*)::int as resources from resources where deleted_at is null${service} group by type order by 2 desc, 1 limit 15`,
    );
    const total = await sql(
      ctx,
      `select count(*)::int as resources from resources where deleted_at is null${service}`,
    );
    if (!r || !total) return 'The inventory could not be counted in this turn.';
    return (
      `The inventory holds ${String(total.rows[0]?.resources)} resources${req.facets.service ? ` tagged service=${req.facets.service}` : ''}. The most common types:\n` +
      numbered(r.rows.map((x) => `${String(x.type)} — ${String(x.resources)}`))
    );
  }
  const [type, name] = hint;
  const r = await sql(
    ctx,
    `select account_id, region, count(*)::int as resources from resources where deleted_at is null and type = ${literal(type)}${service} group by rollup ((account_id, region)) order by account_id nulls first, region`,
  );
  if (!r) return 'The inventory could not be counted in this turn.';
  const total = r.rows.find((x) => x.account_id === null);
  const n = Number(total?.resources ?? 0);
  if (!n)
    return `There are no ${name} (${type}) in the inventory${req.facets.service ? ` tagged service=${req.facets.service}` : ''}.`;
  const rest = r.rows.filter((x) => x.account_id !== null);
  return (
    `There ${n === 1 ? 'is' : 'are'} ${n} ${name} (${type}) in the inventory${req.facets.service ? ` tagged service=${req.facets.service}` : ''}` +
    (rest.length > 1
      ? `:\n${bullets(rest.map((x) => `${String(x.resources)} in account ${String(x.account_id)}, ${String(x.region)}`))}`
      : rest[0]
        ? `, all in account ${String(rest[0].account_id)}, ${String(rest[0].region)}.`
        : '.')
  );
};

function promptOf(ctx: Ctx): string {
  return ctx.req.prompt;
}
