import type { TimelineEvent } from '@opsi/sdk';
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
    status: opts.status,
    severity: opts.severity,
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
 * One incident and its timeline; with --follow, new timeline events as they are written (polling
 * after_id), until the incident is resolved or the command is interrupted.
 */
export async function incident(ctx: Context, id: string, opts: { follow?: boolean; interval?: string }) {
  const client = await ctx.client();
  let current = await client.getIncident(id);
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
  let lastId = events.length ? events[events.length - 1]!.id : undefined;
  const intervalMs = Math.max(200, Number(opts.interval ?? 2) * 1000);
  let stop = false;
  const onSigint = () => (stop = true);
  process.once('SIGINT', onSigint);
  ctx.note('following the timeline (Ctrl-C to stop)…');
  try {
    while (!stop && current.status !== 'resolved') {
      await new Promise((r) => setTimeout(r, intervalMs));
      const next = await client.timeline(id, lastId);
      for (const e of next.events) {
        if (ctx.json) ctx.printJson({ event: e });
        else ctx.out(eventLine(ctx, e));
        lastId = e.id;
      }
      current = await client.getIncident(id);
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
  if (!stop) ctx.note(`incident ${current.status}`);
  return stop ? EXIT.interrupted : EXIT.ok;
}
