import type { RunEvent } from '@opsi/sdk';
import { spinner, type Context } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { preview, visibleLength } from '../format';

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
  const c = ctx.c;
  const live = ctx.isTty && !ctx.json;
  const events: RunEvent[] = [];
  /** The answer printed so far on the terminal, to take it back on run.resumed. */
  let partial = '';
  let atLineStart = true;
  const write = (text: string) => {
    if (!text) return;
    process.stdout.write(text);
    atLineStart = text.endsWith('\n');
  };
  const line = (text: string) => {
    if (!atLineStart) write('\n');
    write(`${text}\n`);
    partial = '';
  };
  const eraseInPlace = () => {
    // Rows the partial answer took on screen, its wrapped lines counted at the terminal's width.
    const columns = process.stdout.columns || 80;
    const rows = partial
      .split('\n')
      .reduce((n, l) => n + Math.max(1, Math.ceil(visibleLength(l) / columns)), 0);
    write(`\r\x1b[2K${rows > 1 ? `\x1b[${rows - 1}F\x1b[J` : ''}`);
    atLineStart = true;
    partial = '';
  };
  const spin = live ? undefined : spinner(ctx, 'asking…');
  let terminal: RunEvent | undefined;
  try {
    for await (const event of stream) {
      events.push(event);
      if (ctx.json) continue;
      switch (event.kind) {
        case 'message.delta':
          if (live) {
            write(String(event.text ?? ''));
            partial += String(event.text ?? '');
          }
          break;
        case 'tool.started':
          line(c.dim(`↳ ${event.tool} ${preview(event.input, 100)}`));
          break;
        case 'tool.finished':
          line(c.dim(`  ${event.ok ? '✓' : c.red('✗')} ${event.tool} ${preview(event.output_preview, 100)}`));
          break;
        case 'run.resumed':
          if (live && partial) eraseInPlace();
          ctx.note('the run was resumed by another worker; its answer starts again');
          break;
        case 'message.completed':
          if (live) {
            if (!atLineStart) write('\n');
          } else {
            spin?.stop();
            line(String(event.text ?? ''));
          }
          partial = '';
          break;
        case 'run.completed':
        case 'run.failed':
          terminal = event;
          break;
      }
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
    if (!atLineStart) write('\n');
    ctx.note(
      `session ${stream.sessionId} · run ${stream.runId}${stream.reconnects ? ` · re-attached ${stream.reconnects}×` : ''}`,
    );
  }
  if (failed) {
    if (!ctx.json) process.stderr.write(`${c.red('error:')} the agent run failed: ${terminal?.detail}\n`);
    return EXIT.runFailed;
  }
  return EXIT.ok;
}
