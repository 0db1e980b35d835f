/** Events: what happened (alerts and the changes around them) and what changed (the inventory and CloudTrail). */
import { isReferenceOnly } from '../parse';
import type {
  AlertGroup,
  GraphDriftOut,
  NotFound,
  RecentAlerts,
  RecentChanges,
  ResourceDetail,
} from '../shapes';
import { ok } from '../toolbox';
import { actorName, when, words } from '../text';
import {
  bullets,
  bySeverity,
  candidatesOf,
  findingLine,
  label,
  quoted,
  resolveResource,
  resourceOfFinding,
  skippedNote,
  typeHint,
  unavailable,
  type Ctx,
  type Handler,
} from './common';

const WINDOW_WORDS: Record<number, string> = {
  1: 'the last day',
  2: 'the last two days',
  3: 'the last three days',
  7: 'the last week',
  14: 'the last two weeks',
  30: 'the last month',
};

/** A window in words (the day count is our own parameter, not a value from the data). */
function windowText(days: number, since?: unknown): string {
  if (since) return `since ${when(since)}`;
  return `in ${WINDOW_WORDS[days] ?? 'the last few days'}`;
}

/** Names for ARNs: what the changes list calls them, else what get_resource said, else the ARN itself. */
class Names {
  private readonly known = new Map<string, string>();
  add(arn: string, text: string) {
    if (!this.known.has(arn)) this.known.set(arn, text);
  }
  of(arn: string): string {
    return this.known.get(arn) ?? arn;
  }
}

async function lookUp(ctx: Ctx, arns: string[], max: number): Promise<Map<string, ResourceDetail>> {
  const out = new Map<string, ResourceDetail>();
  if (!ctx.box.has('get_resource')) return out;
  for (const arn of arns.slice(0, max)) {
    const r = ok(await ctx.box.call<ResourceDetail | NotFound>('get_resource', { resource: arn }));
    if (r?.found) out.set(arn, r);
  }
  return out;
}

function alertLine(a: AlertGroup, names: Names): string {
  const on = (a.arns ?? []).map((arn) => names.of(arn));
  const span =
    a.occurrences === 1
      ? `once, at ${when(a.first_at)}`
      : `${a.occurrences} times from ${when(a.first_at)} to ${when(a.last_at)}`;
  return (
    `${a.name} (${a.severity ?? 'no severity'}${a.service ? `, service ${a.service}` : ''}) fired ${span}` +
    `${a.fingerprint ? ` — fingerprint ${a.fingerprint}` : ''}${on.length ? ` — on ${on.join(', ')}` : ''}`
  );
}

/** Alerts the question points at: by fingerprint or alert name written in it, by a resource it names, or by service. */
async function focusOf(
  ctx: Ctx,
  alerts: AlertGroup[],
  details: Map<string, ResourceDetail>,
): Promise<{ alerts: AlertGroup[]; about?: string } | undefined> {
  const prompt = ctx.req.prompt.toLowerCase();
  const named = alerts.filter(
    (a) =>
      (a.fingerprint && prompt.includes(a.fingerprint.toLowerCase())) ||
      prompt.includes(a.name.toLowerCase()),
  );
  if (named.length) return { alerts: named };
  const target = ctx.req.incidentName ? undefined : ctx.req.target;
  if (!target) return undefined;
  const candidates = candidatesOf(target);
  for (const r of details.values()) {
    if (candidates.some((c) => c === r.name || c === r.native_id || c === r.arn))
      return { alerts: alerts.filter((a) => a.arns?.includes(r.arn)), about: `on ${label(r)}` };
  }
  if (ctx.box.has('get_resource')) {
    for (const ref of candidates.slice(0, 2)) {
      const r = ok(await ctx.box.call<ResourceDetail | NotFound>('get_resource', { resource: ref }));
      if (r?.found) return { alerts: alerts.filter((a) => a.arns?.includes(r.arn)), about: `on ${label(r)}` };
    }
  }
  const ws = words(target);
  const bySvc = alerts.filter((a) => a.service && ws.includes(a.service.toLowerCase()));
  if (bySvc.length) return { alerts: bySvc, about: `of service ${bySvc[0]!.service}` };
  return undefined;
}

/** "What happened last night?" / "What happened in incident Y?" — the alerts, the changes around them, and the findings on what alerted. */
export const incident: Handler = async (ctx) => {
  const { box, req } = ctx;
  if (!box.has('recent_alerts')) return unavailable(ctx, ['recent_alerts'], 'see what happened');
  const days = req.days ?? 2;
  const parts: string[] = [];
  const prompt = req.prompt.toLowerCase();
  // Incident records first: the open ones are named, so an answer never says there are none when there are.
  let openIncidents: Array<{ id: string; title: string; severity: string; status: string }> | undefined;
  if (box.has('list_incidents')) {
    openIncidents = ok(
      await box.call<{ incidents: Array<{ id: string; title: string; severity: string; status: string }> }>(
        'list_incidents',
        { status: 'active', limit: 5 },
      ),
    )?.incidents;
  }
  const openNote = openIncidents?.length
    ? ` Incidents not resolved: ${openIncidents.map((i) => `${i.title} (${i.severity}, ${i.status}, incident ${i.id})`).join('; ')}.`
    : '';
  if (req.incidentName)
    parts.push(
      `There is no incident record ${quoted(ctx, req.incidentName) ? `called ${quoted(ctx, req.incidentName)}` : 'with that id'}: incident ids here are UUIDs.${openNote} Here is what the alerts and the inventory changes show instead.`,
    );
  else if (/\b(?:incidents?|outages?)\b/.test(prompt))
    parts.push(
      openIncidents?.length
        ? `${openNote.trim()} Here is what the alerts and the inventory changes show.`
        : 'No incident record is open in this tenant, so this is reconstructed from the alerts and the inventory changes.',
    );
  else if (openIncidents?.length) parts.push(`${openNote.trim()} The alerts and the changes around them:`);
  const alerts = ok(await box.call<RecentAlerts>('recent_alerts', { days }))?.alerts ?? [];
  const changes = box.has('recent_changes')
    ? ok(await box.call<RecentChanges>('recent_changes', { days }))
    : undefined;
  const window = windowText(days, changes?.since);
  if (!alerts.length) {
    parts.push(`No alerts fired ${window}.`);
  } else {
    const names = new Names();
    for (const c of changes?.changes ?? []) if (c.name) names.add(c.arn, `${c.name} (${c.arn})`);
    const alerted = [...new Set(alerts.flatMap((a) => a.arns ?? []))];
    const details = await lookUp(ctx, alerted, 4);
    for (const [arn, r] of details)
      names.add(arn, label(r).includes(arn) ? label(r) : `${label(r)} (${arn})`);
    const focus = await focusOf(ctx, alerts, details);
    const first = alerts.map((a) => String(a.first_at)).sort()[0];
    const last = alerts
      .map((a) => String(a.last_at))
      .sort()
      .at(-1);
    if (focus && focus.alerts.length && focus.alerts.length < alerts.length) {
      parts.push(
        `The alerts ${focus.about ? `${focus.about} ` : 'you asked about '}${window}:\n${bullets(focus.alerts.map((a) => alertLine(a, names)))}`,
      );
      parts.push(
        `Other alerts in the same window:\n${bullets(alerts.filter((a) => !focus.alerts.includes(a)).map((a) => alertLine(a, names)))}`,
      );
    } else {
      if (focus && !focus.alerts.length && focus.about)
        parts.push(`No alert ${window} is ${focus.about}; these are all the alerts of that window.`);
      parts.push(
        `${alerts.length} ${alerts.length === 1 ? 'alert group' : 'alert groups'} fired ${window}, between ${when(first)} and ${when(last)} (grouped by fingerprint):\n` +
          bullets(alerts.map((a) => alertLine(a, names))),
      );
    }
    // Earlier occurrences of the same fingerprints: a recurrence is worth saying.
    if (days < 7) {
      const week = ok(await box.call<RecentAlerts>('recent_alerts', { days: 7 }))?.alerts ?? [];
      const earlier = week.filter((w) => {
        const now = alerts.find((a) => a.fingerprint === w.fingerprint && a.name === w.name);
        return now && String(w.first_at) < String(now.first_at);
      });
      if (earlier.length)
        parts.push(
          `It has happened before: over the last week, ${earlier
            .map(
              (w) =>
                `${w.name} (fingerprint ${w.fingerprint}) fired ${w.occurrences} times, first at ${when(w.first_at)}`,
            )
            .join('; ')}.`,
        );
    }
    const withFindings = [...details.values()].filter((r) => r.open_findings.length);
    if (withFindings.length)
      parts.push(
        `Open findings on the alerted resources:\n${bullets(
          withFindings.flatMap((r) =>
            bySeverity(r.open_findings)
              .slice(0, 4)
              .map((f) => `${r.name ?? r.arn}: ${findingLine(f)}`),
          ),
        )}`,
      );
    if (!box.has('get_resource'))
      parts.push(skippedNote(ctx, ['get_resource'], 'name the alerted resources or their findings') ?? '');
  }
  if (changes) {
    const names = new Map((changes.changes ?? []).map((c) => [c.arn, c.name]));
    if (changes.cloudtrail.length)
      parts.push(
        `Changes made ${window} (CloudTrail):\n${bullets(
          changes.cloudtrail.map(
            (e) =>
              `${when(e.at)}: ${actorName(e.actor)} (${e.actor}) ran ${e.name} on ${(e.arns ?? [])
                .map((a) => (names.get(a) ? `${names.get(a)} (${a})` : a))
                .join(', ')}`,
          ),
        )}`,
      );
    else parts.push(`No CloudTrail change was recorded ${window}.`);
  } else {
    parts.push(skippedNote(ctx, ['recent_changes'], 'list the changes made around it') ?? '');
  }
  if (alerts.length) parts.push('The data links these events in time only; it records no root cause.');
  return parts.filter(Boolean).join('\n\n');
};

/** The resource a "what changed on X?" question is about: one it names by id or name, or the previous answer's subject. */
async function changeScope(ctx: Ctx): Promise<ResourceDetail | { missing: string } | undefined> {
  const { req, box } = ctx;
  if (!box.has('get_resource')) return undefined;
  let ref: string | undefined = req.ids.find((i) => i.kind !== 'finding')?.id;
  if (!ref && req.prior && req.reference && isReferenceOnly(req.target)) {
    const item =
      req.reference.kind === 'ordinal'
        ? req.prior.items.at(req.reference.index)
        : (req.prior.subject ?? req.prior.items[0]);
    ref = item?.kind === 'finding' ? await resourceOfFinding(ctx, item.id) : item?.id;
  }
  if (!ref && req.target) {
    // Only an id-like word names a resource here ("since yesterday", "in the last week" do not).
    ref = candidatesOf(req.target.replace(/\b(?:the )?(?:last|past|previous|since|this)\b.*$/i, '')).find(
      (c) => !/\s/.test(c) && /[-_./]/.test(c),
    );
  }
  if (!ref && req.target && typeHint(req.target)) {
    // "who changed the payments database?": a resource by the kind and the words the question gives.
    const res = await resolveResource(
      ctx,
      req.target.replace(/\b(?:the )?(?:last|past|previous|since|this)\b.*$/i, ''),
    );
    if (res.status === 'resource') return res.resource;
  }
  if (!ref) return undefined;
  const r = ok(await box.call<ResourceDetail | NotFound>('get_resource', { resource: ref }));
  return r?.found ? r : { missing: ref };
}

function resourceChanges(r: ResourceDetail, out: RecentChanges, window: string): string {
  const events = out.cloudtrail.filter((e) => e.arns?.includes(r.arn));
  const changed = out.changes.filter((c) => c.arn === r.arn);
  const parts: string[] = [];
  if (!events.length && !changed.length) {
    parts.push(
      `Nothing changed on ${label(r)} ${window}: no inventory change and no CloudTrail event names it.`,
    );
  } else {
    parts.push(`What changed on ${label(r)} ${window}:`);
    if (events.length)
      parts.push(
        `Who did what (CloudTrail):\n${bullets(events.map((e) => `${when(e.at)}: ${actorName(e.actor)} (${e.actor}) ran ${e.name}${e.source_ip ? `, from ${e.source_ip}` : ''}`))}`,
      );
    if (changed.length)
      parts.push(
        `In the inventory:\n${bullets(changed.map((c) => `${c.change}${c.changed_fields?.length ? ` — ${c.changed_fields.join(', ')}` : ''}, seen ${when(c.observed_at)}`))}`,
      );
  }
  const open = bySeverity(r.open_findings).slice(0, 5);
  if (open.length) parts.push(`Open on it now:\n${bullets(open.map((f) => findingLine(f)))}`);
  return parts.join('\n\n');
}

const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** "What changed since yesterday?" — inventory changes, who made them (CloudTrail), and what is open on them now. */
export const changes: Handler = async (ctx) => {
  const { box, req } = ctx;
  if (!box.has('recent_changes')) return unavailable(ctx, ['recent_changes'], 'see what changed');
  const found = await changeScope(ctx);
  const scope = found && !('missing' in found) ? found : undefined;
  // One resource's changes are rarely from the last day alone: its window is the last week unless told.
  // "What did alice do?": a person's changes are looked for over the longest window unless told.
  const actorAsked =
    /\bwhat (?:did|has|have) (?!we\b|you\b|i\b|they\b|it\b)[a-z][\w.-]* (?:do|done|been doing|touch|modif|delet|creat|updat|edit|launch|terminat|chang)/i.test(
      req.prompt,
    );
  const days = req.days ?? (found ? 7 : actorAsked ? 30 : 1);
  const out = ok(await box.call<RecentChanges>('recent_changes', { days }));
  if (!out) return 'The changes could not be read in this turn.';
  const window = windowText(days, out.since);
  if (scope) {
    const parts = [resourceChanges(scope, out, window)];
    // Before and after, from snapshot history: what the change did to the resource's settings.
    if (box.has('graph_drift')) {
      const drift = ok(await box.call<GraphDriftOut>('graph_drift', { days }));
      const mine = (drift?.changed ?? []).filter((c) => c.arn === scope.arn);
      const lines = mine.flatMap((c) =>
        c.fields
          .filter((f) => isScalar(f.before) && isScalar(f.after))
          .map(
            (f) =>
              `${f.path}: ${JSON.stringify(f.before)} → ${JSON.stringify(f.after)}${c.actor ? ` (by ${actorName(c.actor)}, ${c.event ?? 'change'})` : ''}`,
          ),
      );
      if (lines.length) parts.push(`Before → after (drift between snapshots):\n${bullets(lines)}`);
    }
    return parts.join('\n\n');
  }
  const missing =
    found && 'missing' in found
      ? `I found no resource ${quoted(ctx, found.missing) ? `called ${quoted(ctx, found.missing)}` : 'with the name or id you gave'} in the inventory, so here is everything that changed instead.\n\n`
      : '';
  // "what did bob change?": only the events of an actor the question names.
  const lower = req.prompt.toLowerCase();
  const actors = [...new Set(out.cloudtrail.map((e) => actorName(e.actor)))];
  const named = actors.filter((a) =>
    new RegExp(`\\b${a.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(lower),
  );
  const events = named.length
    ? out.cloudtrail.filter((e) => named.includes(actorName(e.actor)))
    : out.cloudtrail;
  const touched = new Set(events.flatMap((e) => e.arns ?? []));
  const changed = named.length ? out.changes.filter((c) => touched.has(c.arn)) : out.changes;
  if (!events.length && !changed.length)
    return (
      missing +
      (named.length
        ? `${named.join(' and ')} made no change ${window}.`
        : `Nothing changed ${window}: the inventory recorded no change and CloudTrail no event.`)
    );
  const names = new Map(out.changes.map((c) => [c.arn, c.name]));
  const parts: string[] = [];
  parts.push(
    missing +
      (named.length
        ? `What ${named.join(' and ')} changed ${window}:`
        : `${window[0]!.toUpperCase()}${window.slice(1)}, the inventory recorded ${out.changes.length} ${out.changes.length === 1 ? 'change' : 'changes'} and CloudTrail ${out.cloudtrail.length} ${out.cloudtrail.length === 1 ? 'event' : 'events'}.`),
  );
  if (events.length)
    parts.push(
      `Who did what (CloudTrail), newest first:\n${bullets(
        events.map(
          (e) =>
            `${when(e.at)}: ${actorName(e.actor)} (${e.actor}) ran ${e.name} on ${(e.arns ?? [])
              .map((a) => (names.get(a) ? `${names.get(a)} (${a})` : a))
              .join(', ')}${e.source_ip ? `, from ${e.source_ip}` : ''}`,
        ),
      )}`,
    );
  if (changed.length)
    parts.push(
      `What changed in the inventory:\n${bullets(
        changed.map(
          (c) =>
            `${c.name ?? c.arn} (${c.type ?? 'resource'}, ${c.arn}): ${c.change}${c.changed_fields?.length ? ` — ${c.changed_fields.join(', ')}` : ''}, seen ${when(c.observed_at)}`,
        ),
      )}`,
    );
  // Before and after, from snapshot history (the drift tool), for the changes of the actors asked about.
  if (box.has('graph_drift')) {
    const drift = ok(await box.call<GraphDriftOut>('graph_drift', { days }));
    const mine = (drift?.changed ?? []).filter(
      (c) => !named.length || (c.actor !== null && named.includes(actorName(c.actor))),
    );
    const lines = mine.flatMap((c) =>
      c.fields
        .filter((f) => isScalar(f.before) && isScalar(f.after))
        .map(
          (f) =>
            `${c.name ?? c.native_id}: ${f.path} ${JSON.stringify(f.before)} → ${JSON.stringify(f.after)}${c.actor ? ` (by ${actorName(c.actor)})` : ''}`,
        ),
    );
    if (lines.length) parts.push(`Before → after (drift between snapshots):\n${bullets(lines)}`);
  }
  // What the changes left open: the findings on the changed resources that still exist.
  const live = changed.filter((c) => c.change !== 'deleted').map((c) => c.arn);
  if (live.length) {
    if (box.has('get_resource')) {
      const found = await lookUp(ctx, [...new Set(live)], 5);
      const lines = [...found.values()].flatMap((r) =>
        bySeverity(r.open_findings)
          .slice(0, 3)
          .map((f) => `${r.name ?? r.arn}: ${findingLine(f)}`),
      );
      if (lines.length) parts.push(`Findings open now on what changed:\n${bullets(lines)}`);
    } else {
      parts.push(skippedNote(ctx, ['get_resource'], 'check the changed resources for open findings') ?? '');
    }
  }
  return parts.filter(Boolean).join('\n\n');
};
