import type { RunEvent } from '@opsi/sdk';
import { spinner, type Context } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { createAnswerRenderer } from '../answer-renderer';

export interface AskOptions {
  session?: string;
  tools?: string;
}

/**
 * Streams one agent turn. On a terminal the answer is printed as it comes and tool calls are shown
 * dimmed; elsewhere (a pipe, a file) the tool lines and the completed answer are printed, never a
 * partial one. A dropped connection re-attaches with Last-Event-ID (the SDK's stream), so each event is
 * handled once and in order. On run.resumed the run plays its turn again: the partial answer printed so
 * far is taken back.
 */
export async function ask(ctx: Context, promptWords: string[], opts: AskOptions) {
  const prompt = promptWords.join(' ').trim();
  if (!prompt) throw new CliError('a prompt is needed: opsi ask "<question>"', EXIT.usage);
  const client = await ctx.client();
  const controller = new AbortController();
  const onSigint = () =>
    controller.abort(new CliError('interrupted (the run goes on on the server)', EXIT.interrupted));
  process.once('SIGINT', onSigint);
  const stream = client.stream(prompt, {
    sessionId: opts.session,
    selectedTools: opts.tools
      ? opts.tools
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean)
      : undefined,
    signal: controller.signal,
    onReconnect: ({ attempt, lastSeq }) =>
      ctx.note(`connection lost; re-attaching after event ${lastSeq} (try ${attempt})…`),
  });
  const live = ctx.isTty && !ctx.json;
  const events: RunEvent[] = [];
  const renderer = createAnswerRenderer({
    live,
    columns: () => process.stdout.columns || 80,
    c: ctx.c,
    write: (text) => process.stdout.write(text),
    note: (text) => ctx.note(text),
  });
  const spin = live ? undefined : spinner(ctx, 'asking…');
  let terminal: RunEvent | undefined;
  try {
    for await (const event of stream) {
      events.push(event);
      if (event.kind === 'run.completed' || event.kind === 'run.failed') terminal = event;
      if (ctx.json) continue;
      if (event.kind === 'message.completed' || event.kind === 'tool.started') spin?.stop();
      renderer.handle(event);
    }
  } finally {
    spin?.stop();
    process.off('SIGINT', onSigint);
  }
  terminal ??= events[events.length - 1];
  const failed = terminal?.kind === 'run.failed';
  if (ctx.json) {
    ctx.printJson({
      session_id: stream.sessionId,
      run_id: stream.runId,
      status: failed ? 'failed' : 'completed',
      reply: failed ? null : (terminal?.reply ?? null),
      detail: failed ? terminal?.detail : null,
      reconnects: stream.reconnects,
      events,
    });
  } else {
    renderer.finish();
    ctx.note(
      `session ${stream.sessionId} · run ${stream.runId}${stream.reconnects ? ` · re-attached ${stream.reconnects}×` : ''}`,
    );
  }
  if (failed) {
    if (!ctx.json) process.stderr.write(`${ctx.c.red('error:')} the agent run failed: ${terminal?.detail}\n`);
    return EXIT.runFailed;
  }
  return EXIT.ok;
}
