import type { IncidentSeverity, IncidentStatus, TimelineEvent } from '@opsi/sdk';
import type { Context } from '../context';
import { EXIT } from '../exit-codes';
import { preview, severity, status, table, when } from '../format';

export interface IncidentsOptions {
  status?: string;
  severity?: string;
  limit?: string;
  offset?: string;
}

export async function incidents(ctx: Context, opts: IncidentsOptions) {
  const result = await (
    await ctx.client()
  ).listIncidents({
    // Unchecked here: the service answers an unknown value with 400 (exit status 2).
    status: opts.status as IncidentStatus | undefined,
    severity: opts.severity as IncidentSeverity | undefined,
    limit: opts.limit ? Number(opts.limit) : undefined,
    offset: opts.offset ? Number(opts.offset) : undefined,
  });
  if (ctx.json) return ctx.printJson(result);
  if (result.incidents.length === 0) return ctx.out(ctx.c.dim('No incidents.'));
  ctx.out(
    table(
      ctx.c,
      ['ID', 'SEVERITY', 'STATUS', 'OPENED', 'TITLE'],
      result.incidents.map((i) => [
        i.id,
        severity(ctx.c, i.severity),
        status(ctx.c, i.status),
        when(i.created_at),
        i.title,
      ]),
      ctx.isTty ? process.stdout.columns : undefined,
    ),
  );
}

function eventLine(ctx: Context, e: TimelineEvent): string {
  return `${ctx.c.dim(when(e.created_at))} ${ctx.c.cyan(e.kind)} ${preview(e.body, 200)}${e.actor ? ctx.c.dim(` · ${e.actor}`) : ''}`;
}

/**
 * One incident and its timeline; with --follow, new timeline events as they are written, over the
 * timeline's event stream (re-opened with Last-Event-ID if the connection drops), until the incident
 * is resolved or the command is interrupted (exit status 130).
 */
export async function incident(ctx: Context, id: string, opts: { follow?: boolean }) {
  const client = await ctx.client();
  const current = await client.getIncident(id);
  const { events } = await client.timeline(id);
  if (ctx.json && !opts.follow) return ctx.printJson({ incident: current, timeline: events });
  if (ctx.json) {
    ctx.printJson({ incident: current });
    for (const e of events) ctx.printJson({ event: e });
  } else {
    ctx.out(`${ctx.c.bold(current.title)}`);
    ctx.out(
      `${severity(ctx.c, current.severity)} · ${status(ctx.c, current.status)} · ${current.source} · opened ${when(current.created_at)}`,
    );
    if (current.description) ctx.out(current.description);
    if (current.war_room) ctx.out(ctx.c.dim(`war room session ${current.war_room.session_id}`));
    ctx.out();
    for (const e of events) ctx.out(eventLine(ctx, e));
  }
  if (!opts.follow) return EXIT.ok;
  if (current.status === 'resolved') {
    ctx.note('incident resolved');
    return EXIT.ok;
  }
  const abort = new AbortController();
  const onSigint = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  ctx.note('following the timeline (Ctrl-C to stop)…');
  const stream = client.followTimeline(id, {
    afterId: events.length ? events[events.length - 1]!.id : 0,
    signal: abort.signal,
    onReconnect: ({ lastId }) => ctx.note(`connection lost; reconnecting after event ${lastId}…`),
  });
  try {
    for await (const e of stream) {
      if (ctx.json) ctx.printJson({ event: e });
      else ctx.out(eventLine(ctx, e));
      const to = (e.data as { to?: string } | null | undefined)?.to;
      if (e.kind === 'status_changed' && to === 'resolved') {
        ctx.note('incident resolved');
        return EXIT.ok;
      }
    }
  } catch (e) {
    if (!abort.signal.aborted) throw e;
  } finally {
    process.off('SIGINT', onSigint);
    abort.abort();
  }
  return EXIT.interrupted;
}
