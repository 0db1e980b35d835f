/** Incident records: what is happening in one, which are open, the latest of a severity, and investigations. */
import { ok } from '../toolbox';
import { actorName, when } from '../text';
import { bullets, type Ctx } from './common';

interface IncidentRow {
  id: string;
  title: string;
  severity: string;
  status: string;
  source: string;
  started_at: string;
  resolved_at: string | null;
}
interface IncidentList {
  total: number;
  incidents: IncidentRow[];
}
interface Alert {
  id: number;
  title: string;
  severity: string;
  fingerprint: string;
  count: number;
  arn: string | null;
  first_at: string;
  last_at: string;
}
interface IncidentDetail extends IncidentRow {
  found: boolean;
  description: string | null;
  resources: Array<{ id: string; arn: string; native_id: string; name: string | null; type: string }>;
  alerts: Alert[];
  recurrence_of: { id: string; title: string; started_at: string; resolved_at: string | null } | null;
  war_room: { id: string; session_id: string } | null;
}
interface TimelineOut {
  found: boolean;
  events: Array<{ id: number; kind: string; body: string; actor: string; created_at: string }>;
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/i;

/** Whether the incident records answer this prompt (rather than the alerts and changes alone). */
const SEV = /\bsev ?[1-4]\b|\bseverity[- ]?[1-4]\b/;
const LATEST =
  /\b(?:latest|most recent|newest|last(?! (?:night|week|month|day|\d|few|two|three|seven|hours?))|current)\b/;
const OPEN_NOW =
  /\b(?:open|active|ongoing|on-?going|unresolved|not (?:yet )?resolved|in progress|still (?:open|going|running)|going on|happening|live|current(?:ly)?|right now)\b/;
const PAST = /\b(?:resolved|closed|past|previous|earlier|history|historical|so far|ever|had)\b/;
const LISTING = /\b(?:which|what|list|any|show|how many|are there|is there|do we have|have we got|all)\b/;

/** Whether the incident records answer this prompt (rather than the alerts and changes alone). */
export function asksIncidentRecords(prompt: string, bound: string | undefined): boolean {
  const lower = prompt.toLowerCase();
  if (/\bincidents?\b/.test(lower) && UUID.test(lower)) return true;
  // "the latest SEV1", "what is happening with the SEV2?", "any open sev1s?"
  if (
    SEV.test(lower) &&
    (LATEST.test(lower) ||
      OPEN_NOW.test(lower) ||
      /\bstatus\b|\brecur\w*|\bhappened before\b|\bseen before\b|\bagain\b|\brepeat\w*|\bsimilar\b/.test(
        lower,
      ))
  )
    return true;
  if (/\bincidents\b/.test(lower) && LISTING.test(lower) && OPEN_NOW.test(lower)) return true;
  // "show me all incidents", "how many incidents have we had?", "which incidents were resolved?"
  if (
    /\bincidents\b/.test(lower) &&
    (LISTING.test(lower) ||
      PAST.test(lower) ||
      /\b(?:incidents (?:so far|on record)|all incidents)\b/.test(lower)) &&
    !/\b(?:last night|overnight|what happened)\b/.test(lower)
  )
    return true;
  if (/\b(?:open|active|ongoing|unresolved|current)\s+incidents?\b/.test(lower)) return true;
  if (
    /\bincident\b/.test(lower) &&
    LATEST.test(lower) &&
    !/\bon\s+\S+/.test(lower.split('incident')[1] ?? '')
  )
    return true;
  if (
    bound &&
    /\b(?:this|the) (?:incident|outage)\b|\bwhat(?:'s| is) (?:happening|going on)\b|\bstatus\b|\bsummar/.test(
      lower,
    )
  )
    return true;
  return false;
}

function line(i: IncidentRow): string {
  return `${i.title} — ${i.severity}, ${i.status}, started ${when(i.started_at)}${i.resolved_at ? `, resolved ${when(i.resolved_at)}` : ''} (incident ${i.id})`;
}

function resourceName(d: IncidentDetail, arn: string | null): string {
  if (!arn) return 'no matched resource';
  const r = d.resources.find((x) => x.arn === arn);
  if (!r) return arn;
  return r.name && r.name !== r.native_id ? `${r.name} (${r.native_id})` : r.native_id;
}

function alertLine(d: IncidentDetail, a: Alert): string {
  const times =
    a.count === 1
      ? `once at ${when(a.first_at)}`
      : `${a.count} times from ${when(a.first_at)} to ${when(a.last_at)}`;
  return `${a.title} (${a.severity}) on ${resourceName(d, a.arn)}, fired ${times} — triage event ${a.id}, fingerprint ${a.fingerprint}`;
}

async function describeIncident(ctx: Ctx, id: string): Promise<string> {
  const d = ok(await ctx.box.call<IncidentDetail>('get_incident', { id }));
  if (!d?.found) return `There is no incident with that id in this tenant.`;
  const parts = [
    `Incident ${d.id}: ${d.title} — ${d.severity}, ${d.status} (opened by ${d.source === 'triage' ? 'triage' : 'hand'}), started ${when(d.started_at)}${d.resolved_at ? `, resolved ${when(d.resolved_at)}` : ''}.`,
  ];
  if (d.resources.length)
    parts.push(
      `Affected resources:\n${bullets(d.resources.map((r) => `${resourceName(d, r.arn)}, ${r.type}`))}`,
    );
  if (d.alerts.length) parts.push(`Alerts attached:\n${bullets(d.alerts.map((a) => alertLine(d, a)))}`);
  else parts.push('No alert is attached to it.');
  if (d.recurrence_of)
    parts.push(
      `It is a recurrence of incident ${d.recurrence_of.id} (${d.recurrence_of.title}), started ${when(d.recurrence_of.started_at)}${d.recurrence_of.resolved_at ? `, resolved ${when(d.recurrence_of.resolved_at)}` : ''}.`,
    );
  if (d.war_room) parts.push(`Its war room is open (session ${d.war_room.session_id}).`);
  if (ctx.box.has('incident_timeline')) {
    const tl = ok(await ctx.box.call<TimelineOut>('incident_timeline', { id }));
    const recent = (tl?.events ?? []).slice(-6);
    if (recent.length)
      parts.push(
        `Latest on its timeline:\n${bullets(recent.map((e) => `${when(e.created_at)} [${e.kind}] ${e.body.split('\n')[0]} (event ${e.id}, ${e.actor})`))}`,
      );
  }
  return parts.join('\n\n');
}

/** "What is happening in incident X?", "What was the latest SEV1?", "Which incidents are open?" */
export async function incidentRecords(ctx: Ctx, bound: string | undefined): Promise<string> {
  const { box, req } = ctx;
  const lower = req.prompt.toLowerCase();
  const id = UUID.exec(req.prompt)?.[0] ?? bound;
  const sev = /\bsev(?:erity)?[- ]?([1-4])\b/.exec(lower);
  const latestIncident =
    /\bincident\b/.test(lower) &&
    !/\bincidents\b/.test(lower) &&
    (LATEST.test(lower) || OPEN_NOW.test(lower));
  if (latestIncident && !sev && !id) {
    // "the open incident" is the newest one not resolved; "the latest incident" the newest of all.
    const out = ok(
      await box.call<IncidentList>('list_incidents', {
        limit: 1,
        ...(LATEST.test(lower) ? {} : { status: 'active' }),
      }),
    );
    const latest = out?.incidents[0];
    if (!latest) return 'There is no incident on record.';
    return `The ${LATEST.test(lower) ? 'latest' : 'open'} incident is ${line(latest)}.\n\n${await describeIncident(ctx, latest.id)}`;
  }
  if (sev && (LATEST.test(lower) || !OPEN_NOW.test(lower))) {
    const severity = `SEV${sev[1]}`;
    const out = ok(await box.call<IncidentList>('list_incidents', { severity, limit: 1 }));
    const latest = out?.incidents[0];
    if (!latest) return `There is no ${severity} incident on record.`;
    return `The latest ${severity} incident is ${line(latest)}.\n\n${await describeIncident(ctx, latest.id)}`;
  }
  if (id && (UUID.test(req.prompt) || !/\bincidents\b/.test(lower))) return describeIncident(ctx, id);
  const severity = sev ? `SEV${sev[1]}` : undefined;
  const kind = severity ? `${severity} incident` : 'incident';
  // Resolved ones, or every one on record, when the question asks for them rather than the open ones.
  const wants = OPEN_NOW.test(lower)
    ? 'active'
    : /\b(?:resolved|closed)\b/.test(lower)
      ? 'resolved'
      : /\bincidents\b/.test(lower)
        ? 'all'
        : 'active';
  if (wants !== 'active') {
    const all = ok(
      await box.call<IncidentList>('list_incidents', {
        limit: 20,
        ...(wants === 'resolved' ? { status: 'resolved' } : {}),
        ...(severity ? { severity } : {}),
      }),
    );
    if (!all) return 'The incidents could not be read in this turn.';
    const what = wants === 'resolved' ? `resolved ${kind}` : kind;
    if (!all.incidents.length) return `There is no ${what} on record.`;
    return `${all.total} ${all.total === 1 ? what : `${what}s`} on record, newest first:\n${bullets(all.incidents.map(line))}`;
  }
  const out = ok(
    await box.call<IncidentList>('list_incidents', {
      status: 'active',
      limit: 20,
      ...(severity ? { severity } : {}),
    }),
  );
  if (!out) return 'The incidents could not be read in this turn.';
  if (!out.incidents.length) return `No ${kind} is open: every ${kind} on record is resolved.`;
  return `${out.total} ${out.total === 1 ? `${kind} is` : `${kind}s are`} not resolved, newest first:\n${bullets(out.incidents.map(line))}`;
}

interface Related {
  found: boolean;
  resources: Array<{
    arn: string;
    name: string | null;
    dependencies: Array<{ arn: string; name: string | null; edge: string | null }>;
    dependents: Array<{ arn: string; name: string | null; edge: string | null }>;
  }>;
}
interface Changes {
  found: boolean;
  cloudtrail: Array<{ id: number; at: string; name: string; actor: string | null; arns: string[] }>;
  changes: Array<{ arn: string; change: string; changed_fields: string[]; observed_at: string }>;
}
interface Metrics {
  found: boolean;
  metrics: Array<{
    arn: string;
    name: string | null;
    metric: string;
    day: string;
    avg: number | null;
    max: number | null;
  }>;
}
interface Findings {
  found: boolean;
  findings: Array<{
    id: string;
    title: string;
    severity: string;
    arn: string;
    resource_name: string | null;
    relation: string;
  }>;
}
interface Similar {
  found: boolean;
  incidents: Array<IncidentRow & { shared: string }>;
}

/**
 * An investigation: the incident, its alerts, the affected resources with their dependencies and
 * dependents, what changed before it (and who), the metrics around its start, the open findings on
 * connected nodes and the similar past incidents; then hypotheses, each with its evidence, and a summary
 * that cites the ids. Every statement is taken from the tools' output.
 */
export async function investigate(ctx: Ctx, id: string): Promise<string> {
  const { box } = ctx;
  const d = ok(await box.call<IncidentDetail>('get_incident', { id }));
  if (!d?.found) return `There is no incident ${id} in this tenant to investigate.`;
  const related = ok(await box.call<Related>('incident_related_resources', { id }));
  const changes = ok(await box.call<Changes>('incident_changes', { id, days: 7 }));
  const metrics = ok(await box.call<Metrics>('incident_metrics', { id }));
  const findings = ok(await box.call<Findings>('incident_findings', { id }));
  const similar = ok(await box.call<Similar>('similar_incidents', { id }));

  const parts: string[] = [
    `Investigation of incident ${d.id}: ${d.title} (${d.severity}, ${d.status}), started ${when(d.started_at)}.`,
  ];
  parts.push(
    d.alerts.length
      ? `Alerts attached:\n${bullets(d.alerts.map((a) => alertLine(d, a)))}`
      : 'No alert is attached to it.',
  );
  for (const r of related?.resources ?? []) {
    const deps = r.dependencies.map((x) => `${x.name ?? x.arn} (${x.edge ?? 'edge'})`);
    const dents = r.dependents.map((x) => `${x.name ?? x.arn} (${x.edge ?? 'edge'})`);
    parts.push(
      `${r.name ?? r.arn} (${r.arn}) depends on: ${deps.length ? deps.slice(0, 8).join(', ') : 'nothing recorded'}; depended on by: ${dents.length ? dents.slice(0, 8).join(', ') : 'nothing recorded'}.`,
    );
  }
  const trail = changes?.cloudtrail ?? [];
  if (trail.length)
    parts.push(
      `Changes in the week before, on these resources and their neighbours (CloudTrail):\n${bullets(
        trail.map(
          (e) =>
            `${when(e.at)}: ${actorName(e.actor)} (${e.actor ?? 'unknown'}) ran ${e.name} on ${e.arns.join(', ')}`,
        ),
      )}`,
    );
  else parts.push('No CloudTrail change touched these resources or their neighbours in the week before.');
  const peaks = (metrics?.metrics ?? []).filter((m) => m.max !== null);
  if (peaks.length)
    parts.push(
      `Metrics around the start (daily):\n${bullets(
        peaks
          .slice(0, 12)
          .map(
            (m) =>
              `${m.name ?? m.arn} ${m.metric} on ${m.day}: max ${m.max}${m.avg !== null ? `, avg ${m.avg}` : ''}`,
          ),
      )}`,
    );
  const open = findings?.findings ?? [];
  if (open.length)
    parts.push(
      `Open findings on the affected and connected resources:\n${bullets(
        open
          .slice(0, 10)
          .map(
            (f) =>
              `${f.title} (${f.severity}, on ${f.resource_name ?? f.arn}, ${f.relation}) — finding ${f.id}`,
          ),
      )}`,
    );
  const past = similar?.incidents ?? [];
  if (past.length)
    parts.push(
      `Similar past incidents:\n${bullets(past.map((p) => `${line(p)} — shares its ${p.shared === 'recurrence' ? 'alert (this is a recurrence)' : p.shared}`))}`,
    );

  // Hypotheses, each resting on what the tools returned.
  const hypotheses: string[] = [];
  for (const e of trail.slice(0, 3))
    hypotheses.push(
      `A change before the start: ${actorName(e.actor)} ran ${e.name} at ${when(e.at)} on ${e.arns.join(', ')} (CloudTrail event ${e.id}).`,
    );
  if (d.recurrence_of)
    hypotheses.push(
      `A known failure coming back: the same alert opened incident ${d.recurrence_of.id} (${d.recurrence_of.title}) at ${when(d.recurrence_of.started_at)}.`,
    );
  const serious = open.filter((f) => f.severity === 'critical' || f.severity === 'high').slice(0, 3);
  for (const f of serious)
    hypotheses.push(`A standing weakness: ${f.title} on ${f.resource_name ?? f.arn} (finding ${f.id}).`);
  const spread = d.alerts.filter((a) => a.arn && d.resources[0] && a.arn !== d.resources[0].arn);
  if (spread.length)
    hypotheses.push(
      `A failure travelling along dependencies: ${spread.map((a) => `${a.title} on ${resourceName(d, a.arn)} (triage event ${a.id})`).join(', ')} followed the first alert.`,
    );
  parts.push(
    hypotheses.length
      ? `Hypotheses, with their evidence:\n${bullets(hypotheses)}`
      : 'No hypothesis stands out: the data shows no change, finding or earlier incident linked to it.',
  );
  const cite = [
    `incident ${d.id}`,
    ...d.resources.map((r) => r.native_id),
    ...(d.recurrence_of ? [`incident ${d.recurrence_of.id}`] : []),
    ...serious.map((f) => `finding ${f.id}`),
  ];
  parts.push(
    `Summary: ${d.title} — ${hypotheses.length ? hypotheses[0] : 'cause not established from the data'} Cited: ${cite.join(', ')}.`,
  );
  parts.push('The data links these facts in time and by dependency; it records no root cause.');
  return parts.join('\n\n');
}
