import type { Request } from '../history';
import type { Facets } from '../parse';
import type {
  AddUp,
  FindingDetail,
  FindingList,
  FindingSummary,
  NotFound,
  ResourceDetail,
  ResourceRow,
  SqlResult,
} from '../shapes';
import { checkGrounding } from '../../grounding';
import { ok, type ToolBox } from '../toolbox';
import { idsIn, money, num, severityRank, words } from '../text';

export interface Ctx {
  box: ToolBox;
  req: Request;
}

/** One handler per intent: its plan of tool calls and the answer composed from what they returned. */
export type Handler = (ctx: Ctx) => Promise<string>;

/**
 * The user's own words, quoted back only when every number or id in them appears in this turn's tool
 * output (a tool that did not find "i-0123…" says so, which grounds it): an answer repeats nothing the
 * data does not hold, so a made-up id quoted back never reads as a claim. Undefined otherwise.
 */
export function quoted(ctx: Ctx, text: string | undefined): string | undefined {
  if (!text) return undefined;
  return checkGrounding(text, ctx.box.outputs).grounded ? `"${text}"` : undefined;
}

/** The answer when a tool the question needs is not among the turn's tools. */
export function unavailable(ctx: Ctx, tools: string[], what: string): string {
  const have = ctx.box.names();
  const list = tools.map((t) => `\`${t}\``).join(tools.length === 2 ? ' and ' : ', ');
  return (
    `To ${what} I need the ${list} tool${tools.length > 1 ? 's' : ''}, which ${tools.length > 1 ? 'are' : 'is'} not available in this turn ` +
    `(the tools selected for it: ${have.length ? have.map((t) => `\`${t}\``).join(', ') : 'none'}). ` +
    `Ask again with ${tools.length > 1 ? 'them' : 'it'} selected, or without a tool selection.`
  );
}

/** Says which tools a plan would have used for extra detail but this turn does not have. */
export function skippedNote(ctx: Ctx, tools: string[], what: string): string | undefined {
  const lacking = ctx.box.lacking(tools);
  if (!lacking.length) return undefined;
  return `(${lacking.map((t) => `\`${t}\``).join(' and ')} ${lacking.length > 1 ? 'are' : 'is'} not available in this turn, so I could not ${what}.)`;
}

/** A resource as the answer names it: its name and the id to cite (a native id when it has one, else the ARN). */
export function label(r: { arn: string; native_id?: string | null; name?: string | null }): string {
  const id = citeId(r);
  if (r.name && r.name !== id) return `${r.name} (${id})`;
  return id;
}

/** The id that identifies a resource in an answer: its native id when that is an AWS-style id, else its ARN. */
export function citeId(r: { arn: string; native_id?: string | null }): string {
  if (r.native_id && idsIn(r.native_id).some((i) => i.kind === 'native' && i.id === r.native_id))
    return r.native_id;
  return r.arn;
}

export function findingLine(f: FindingSummary, withSavings = true): string {
  const savings = num(f.monthly_savings);
  const saves =
    withSavings && savings && savings > 0 && !f.title.includes(money(savings))
      ? ` — saves ${money(savings)}/month`
      : '';
  return `[${f.severity} · ${f.domain}] ${f.title}${saves} — finding ${f.id}`;
}

export function numbered(lines: string[]): string {
  return lines.map((l, i) => `${i + 1}. ${l}`).join('\n');
}

export function bullets(lines: string[]): string {
  return lines.map((l) => `- ${l}`).join('\n');
}

/** Most severe first; ties by title, so the order never depends on how the database returned the rows. */
export function bySeverity<T extends { severity: string; title?: string }>(rows: T[]): T[] {
  return [...rows].sort(
    (a, b) =>
      severityRank(b.severity) - severityRank(a.severity) ||
      String(a.title ?? '').localeCompare(String(b.title ?? '')),
  );
}

/** How a set of filters reads in a sentence: "open security findings of high severity on … service=payments". */
export function scopeText(f: Facets, accountLabel?: string, one = false): string {
  const parts = [`open ${f.domain ? `${f.domain} ` : ''}${one ? 'finding' : 'findings'}`];
  if (f.severity) parts.push(`of ${f.severity} severity`);
  if (f.service) parts.push(`on resources tagged service=${f.service}`);
  if (f.account) parts.push(`in account ${accountLabel ?? f.account}`);
  return parts.join(' ');
}

export function hasFacets(f: Facets): boolean {
  return Boolean(f.domain || f.severity || f.service || f.account);
}

export type AccountResolution =
  | { status: 'none' }
  | { status: 'ok'; id: string; label: string }
  | { status: 'unknown'; text: string }
  | { status: 'unavailable' };

/** An account named by id or by name, looked up among the inventory's aws_account resources. */
export async function resolveAccount(ctx: Ctx, account: string | undefined): Promise<AccountResolution> {
  if (!account) return { status: 'none' };
  const byId = /^\d{12}$/.test(account);
  if (!ctx.box.has('search_resources')) {
    // An id still filters; a name cannot be resolved without the search.
    if (byId) return { status: 'ok', id: account, label: account };
    ctx.box.lacking(['search_resources']);
    return { status: 'unavailable' };
  }
  const found = ok(
    await ctx.box.call<{ resources: ResourceRow[] }>('search_resources', {
      ...(byId ? { account_id: account } : { text: account }),
      type: 'aws_account',
      limit: 10,
    }),
  );
  const rows = found?.resources ?? [];
  const exact = rows.filter((r) => r.name?.toLowerCase() === account.toLowerCase());
  const pick = exact.length === 1 ? exact[0] : rows.length === 1 ? rows[0] : undefined;
  if (!pick?.native_id) return { status: 'unknown', text: account };
  return { status: 'ok', id: pick.native_id, label: `${pick.name ?? pick.native_id} (${pick.native_id})` };
}

/** Words that say what kind of resource a phrase means, and the inventory type they map to. */
export const TYPE_WORDS: Array<[RegExp, string, string]> = [
  [/\b(?:rds|databases?|dbs?)\b/, 'aws_rds_db_instance', 'RDS database instances'],
  [/\b(?:volumes?|ebs|disks?)\b/, 'aws_ebs_volume', 'EBS volumes'],
  [/\bsnapshots?\b/, 'aws_ebs_snapshot', 'EBS snapshots'],
  [/\b(?:security groups?|sgs?|firewalls?)\b/, 'aws_vpc_security_group', 'security groups'],
  [/\b(?:load balancers?|albs?|elbs?)\b/, 'aws_ec2_application_load_balancer', 'load balancers'],
  [/\btarget groups?\b/, 'aws_ec2_target_group', 'target groups'],
  [/\b(?:auto ?scaling groups?|asgs?)\b/, 'aws_ec2_autoscaling_group', 'Auto Scaling groups'],
  [/\b(?:nat gateways?|nats?)\b/, 'aws_vpc_nat_gateway', 'NAT gateways'],
  [/\b(?:elastic ips?|eips?)\b/, 'aws_vpc_eip', 'Elastic IPs'],
  [/\b(?:buckets?|s3)\b/, 'aws_s3_bucket', 'S3 buckets'],
  [/\b(?:dynamo(?:db)?|tables?)\b/, 'aws_dynamodb_table', 'DynamoDB tables'],
  [
    /\b(?:caches?|elasticache|redis)\b/,
    'aws_elasticache_replication_group',
    'ElastiCache replication groups',
  ],
  [/\b(?:alarms?)\b/, 'aws_cloudwatch_alarm', 'CloudWatch alarms'],
  [/\blog groups?\b/, 'aws_cloudwatch_log_group', 'log groups'],
  [/\b(?:subnets?)\b/, 'aws_vpc_subnet', 'subnets'],
  [/\bvpcs?\b/, 'aws_vpc', 'VPCs'],
  [/\b(?:iam )?users?\b/, 'aws_iam_user', 'IAM users'],
  [/\b(?:iam )?roles?\b/, 'aws_iam_role', 'IAM roles'],
  [/\baccess keys?\b/, 'aws_iam_access_key', 'access keys'],
  [/\baccounts?\b/, 'aws_account', 'accounts'],
  [/\b(?:ec2|instances?|servers?|vms?|machines?|hosts?)\b/, 'aws_ec2_instance', 'EC2 instances'],
];

export function typeHint(text: string): [string, string] | undefined {
  const lower = text.toLowerCase();
  for (const [re, type, name] of TYPE_WORDS) if (re.test(lower)) return [type, name];
  return undefined;
}

/** A phrase that names only a kind of resource ("our databases", "the buckets"), no particular one. */
export function onlyTypeWords(text: string): [string, string] | undefined {
  const hint = typeHint(text);
  if (!hint) return undefined;
  let rest = text.toLowerCase();
  for (const [re] of TYPE_WORDS) rest = rest.replace(new RegExp(re.source, 'g'), ' ');
  rest = rest
    .replace(/\b(?:our|the|all|my|any|every|of|in|we|have|aws|each)\b/g, ' ')
    .replace(/[^a-z0-9]+/g, '');
  return rest ? undefined : hint;
}

/** Which of several resources sharing a name a bare name most likely means: the workload before its parts. */
const PRIMARY_TYPES = [
  'aws_ec2_instance',
  'aws_rds_db_instance',
  'aws_vpc_nat_gateway',
  'aws_ec2_application_load_balancer',
  'aws_ec2_autoscaling_group',
  'aws_vpc_security_group',
  'aws_s3_bucket',
  'aws_dynamodb_table',
  'aws_elasticache_replication_group',
  'aws_iam_user',
  'aws_iam_role',
  'aws_account',
];
const SECONDARY_TYPES = [
  'aws_vpc_eip',
  'aws_ebs_volume',
  'aws_iam_instance_profile',
  'aws_iam_access_key',
  'aws_cloudwatch_alarm',
];

function typeRank(type: string | null | undefined): number {
  const t = String(type);
  const primary = PRIMARY_TYPES.indexOf(t);
  if (primary >= 0) return primary;
  return SECONDARY_TYPES.includes(t) ? 100 + SECONDARY_TYPES.indexOf(t) : 50;
}

export type Resolution =
  | { status: 'resource'; resource: ResourceDetail; alsoNamed?: ResourceRow[] }
  | { status: 'type'; type: string; name: string; resources: ResourceRow[] }
  | { status: 'service'; service: string; resources: ResourceRow[] }
  | { status: 'ambiguous'; text: string; matches: ResourceRow[] }
  | { status: 'not-found'; text: string; suggestions: ResourceRow[] }
  | { status: 'unavailable'; tools: string[] }
  | { status: 'nothing' };

const FILLER = new Set(
  (
    'the a an our my this that of in on for with and or to is are it its resource resources thing ' +
    'instance instances database databases db volume volumes bucket buckets group groups security load ' +
    'balancer table cache server host machine called named please right now service'
  ).split(' '),
);

/** The refs worth trying for a phrase: ids it contains, id-like words (with - _ . / or digits), then the phrase. */
export function candidatesOf(text: string): string[] {
  const out: string[] = [];
  for (const id of idsIn(text)) out.push(id.id);
  for (const m of text.matchAll(/[A-Za-z0-9][\w./:-]*[\w]/g)) {
    const w = m[0];
    if (/[-_./:]|\d/.test(w) && !FILLER.has(w.toLowerCase())) out.push(w);
  }
  const phrase = text.trim();
  if (phrase.split(/\s+/).length <= 4) out.push(phrase);
  return [...new Set(out)];
}

/** The plain words of a phrase that could be part of a name, longest first. */
function searchWords(text: string): string[] {
  const ws = words(text).filter((w) => w.length >= 3 && !FILLER.has(w) && !/[-_./]/.test(w));
  // Words that only say the kind ("dynamodb", "table") name no particular resource: the others first.
  const kind = (w: string) => TYPE_WORDS.some(([re]) => re.test(w)) || /^(?:aws|amazon|iam|ec2|s3)$/.test(w);
  return [...new Set(ws)].sort((a, b) => Number(kind(a)) - Number(kind(b)) || b.length - a.length);
}

/**
 * Finds the resource a phrase names: exactly (an ARN, a native id or a name) with get_resource, then as a
 * service tag, then by search (narrowed by a type the phrase implies, "database" → RDS). Says when
 * several match or none does, with what it tried.
 */
export async function resolveResource(ctx: Ctx, text: string): Promise<Resolution> {
  const box = ctx.box;
  if (!box.has('get_resource')) return { status: 'unavailable', tools: box.lacking(['get_resource']) };
  const candidates = candidatesOf(text);
  const kind = onlyTypeWords(text);
  if (kind && box.has('search_resources')) {
    const rows = ok(
      await box.call<{ resources: ResourceRow[] }>('search_resources', { type: kind[0], limit: 10 }),
    )?.resources;
    if (rows) return { status: 'type', type: kind[0], name: kind[1], resources: rows };
  }
  for (const ref of candidates.slice(0, 3)) {
    const r = ok(await box.call<ResourceDetail | NotFound>('get_resource', { resource: ref }));
    if (r?.found) return sameName(ctx, ref, r);
  }
  if (!box.has('search_resources')) {
    box.lacking(['search_resources']);
    return { status: 'not-found', text, suggestions: [] };
  }
  const term =
    candidates.find((c) => !/\s/.test(c) && !idsIn(c).length) ??
    candidates.find((c) => !/\s/.test(c)) ??
    searchWords(text)[0];
  if (!term) return { status: 'not-found', text, suggestions: [] };
  const search = async (input: Record<string, unknown>) =>
    ok(await box.call<{ resources: ResourceRow[] }>('search_resources', input))?.resources ?? [];
  const single = async (rows: ResourceRow[]): Promise<Resolution | undefined> => {
    const exact = rows.filter((r) => r.name?.toLowerCase() === term.toLowerCase());
    const one = exact.length === 1 ? exact[0] : rows.length === 1 ? rows[0] : undefined;
    if (!one) return undefined;
    const r = ok(await box.call<ResourceDetail | NotFound>('get_resource', { resource: one.arn }));
    return r?.found ? { status: 'resource', resource: r } : undefined;
  };
  // "the payments database": a search narrowed to the type the words imply comes first.
  const hint = typeHint(text);
  let rows: ResourceRow[] = [];
  if (hint) {
    rows = await search({ text: term, type: hint[0], limit: 10 });
    const found = await single(rows);
    if (found) return found;
  }
  const svc = await search({ service: term, limit: 50 });
  if (svc.length) return { status: 'service', service: term, resources: svc };
  if (!rows.length) {
    rows = await search({ text: term, limit: 10 });
    const found = await single(rows);
    if (found) return found;
  }
  if (rows.length > 1) return { status: 'ambiguous', text: term, matches: rows };
  // Nothing by that name: look for its longest word, to suggest what the user may have meant.
  const part = words(term)
    .filter(
      (w) => !/[-_./]/.test(w) && w.length >= 4 && !FILLER.has(w) && !/^(?:prod|staging|test|dev)$/.test(w),
    )
    .sort((a, b) => b.length - a.length)[0];
  let suggestions: ResourceRow[] = [];
  if (part && part !== term) {
    suggestions =
      ok(await box.call<{ resources: ResourceRow[] }>('search_resources', { text: part, limit: 5 }))
        ?.resources ?? [];
  }
  return { status: 'not-found', text: term, suggestions };
}

/**
 * A resource found by its name may share it with others (a NAT gateway and its Elastic IP, a user and
 * its access key): the one the question's words or the resource's role point at is kept, the others named.
 */
async function sameName(ctx: Ctx, ref: string, r: ResourceDetail): Promise<Resolution> {
  if (ref !== r.name || ref === r.native_id || !ctx.box.has('search_resources'))
    return { status: 'resource', resource: r };
  const rows =
    ok(await ctx.box.call<{ resources: ResourceRow[] }>('search_resources', { text: ref, limit: 25 }))
      ?.resources ?? [];
  const same = rows.filter((x) => x.name === ref);
  if (same.length < 2) return { status: 'resource', resource: r };
  const hint = typeHint(ctx.req.prompt);
  const best =
    (hint && same.find((x) => x.type === hint[0])) ??
    [...same].sort((a, b) => typeRank(a.type) - typeRank(b.type))[0]!;
  const alsoNamed = same.filter((x) => x.arn !== best.arn);
  if (best.arn === r.arn) return { status: 'resource', resource: r, alsoNamed };
  const chosen = ok(await ctx.box.call<ResourceDetail | NotFound>('get_resource', { resource: best.arn }));
  return chosen?.found
    ? { status: 'resource', resource: chosen, alsoNamed: same.filter((x) => x.arn !== chosen.arn) }
    : { status: 'resource', resource: r, alsoNamed };
}

/** A note naming the other resources that share a resource's name. */
export function alsoNamedNote(alsoNamed: ResourceRow[] | undefined): string | undefined {
  if (!alsoNamed?.length) return undefined;
  return `(Also named ${alsoNamed[0]!.name ?? ''}: ${alsoNamed.map((x) => `${label(x)} — ${x.type ?? 'resource'}`).join('; ')}. Ask by id for ${alsoNamed.length === 1 ? 'that one' : 'those'}.)`;
}

/** The answer for a phrase that matched several resources, or none. */
export function unresolvedAnswer(ctx: Ctx, res: Resolution): string {
  if (res.status === 'ambiguous') {
    return (
      `Several resources match ${quoted(ctx, res.text) ?? 'what you named'}; which one do you mean?\n` +
      numbered(
        res.matches.map((r) => `${label(r)} — ${r.type ?? 'resource'}${r.region ? ` in ${r.region}` : ''}`),
      )
    );
  }
  if (res.status === 'not-found') {
    const base =
      `I found no resource ${quoted(ctx, res.text) ? `called ${quoted(ctx, res.text)}` : 'with the name or id you gave'} in the inventory: no ARN, native id or name matches it, ` +
      `and it is not a service tag either. I have no data about it, so I cannot say what is wrong with it.`;
    if (!res.suggestions.length) return base;
    return `${base}\nResources with similar names:\n${bullets(res.suggestions.map((r) => `${label(r)} — ${r.type ?? 'resource'}`))}`;
  }
  return 'I could not tell which resource you mean: name it by its name, native id (vol-…, i-…, sg-…) or ARN.';
}

/** Runs a read-only query through inventory_sql; strings go in as SQL literals with quotes doubled. */
export async function sql(ctx: Ctx, query: string): Promise<SqlResult | undefined> {
  return ok(await ctx.box.call<SqlResult>('inventory_sql', { query }));
}

export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** Active findings of every domain (one call per domain keeps each list under the tool's cap). */
export async function allFindings(ctx: Ctx): Promise<FindingSummary[]> {
  const out: FindingSummary[] = [];
  for (const domain of ['security', 'sre', 'finops']) {
    const r = ok(await ctx.box.call<FindingList>('list_findings', { domain, limit: 50 }));
    out.push(...(r?.findings ?? []));
  }
  return out;
}

/** The main resource of a finding: the costliest of its resources, else its first. */
export async function resourceOfFinding(ctx: Ctx, id: string): Promise<string | undefined> {
  if (!ctx.box.has('get_finding')) return undefined;
  const f = ok(await ctx.box.call<FindingDetail>('get_finding', { id }));
  const rows = [...(f?.resources ?? [])].sort(
    (a, b) => (num(b.monthly_cost) ?? -1) - (num(a.monthly_cost) ?? -1),
  );
  return rows[0]?.arn;
}

/**
 * What fixing a set of findings saves, as add_up counts it: each resource once (two findings on one
 * volume, delete or migrate, are alternatives), with the plain sum named when it differs.
 */
export function savedText(out: AddUp): string {
  const once = out.findings_monthly_savings_each_resource_once;
  const sum = out.findings_monthly_savings_total;
  return Math.abs(once - sum) < 0.005
    ? `${money(once)} a month in total (the add_up tool's sum of their savings)`
    : `${money(once)} a month in total (the add_up tool's total, each resource counted once: findings on the same resource are alternatives, so their ${money(sum)} do not add up)`;
}
