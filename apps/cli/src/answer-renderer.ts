import type { RunEvent } from '@opsi/sdk';
import type { Colors } from './context';
import { preview, visibleLength } from './format';

export interface AnswerRendererOptions {
  /** A terminal: the answer is printed as it streams, and can be taken back. */
  live: boolean;
  /** The terminal's width, to count the rows a partial answer took. */
  columns: () => number;
  c: Colors;
  write: (text: string) => void;
  note: (text: string) => void;
}

/**
 * Prints a run's events for a person. Live (a terminal): deltas as they come, tool calls dimmed, and on
 * run.resumed the partial answer is erased (the retried turn plays from its start). Not live (a pipe, a
 * file): the tool lines and the completed answer only, so nothing partial is ever printed.
 */
export function createAnswerRenderer(o: AnswerRendererOptions) {
  const { c } = o;
  let partial = '';
  let atLineStart = true;
  const write = (text: string) => {
    if (!text) return;
    o.write(text);
    atLineStart = text.endsWith('\n');
  };
  const line = (text: string) => {
    if (!atLineStart) write('\n');
    write(`${text}\n`);
    partial = '';
  };
  const erase = () => {
    const columns = Math.max(1, o.columns());
    const rows = partial
      .split('\n')
      .reduce((n, l) => n + Math.max(1, Math.ceil(visibleLength(l) / columns)), 0);
    // To the start of the row, clear it, up to the first row of the partial answer, clear below.
    write(`\r\x1b[2K${rows > 1 ? `\x1b[${rows - 1}F\x1b[J` : ''}`);
    atLineStart = true;
    partial = '';
  };
  return {
    handle(event: RunEvent) {
      switch (event.kind) {
        case 'message.delta':
          if (o.live) {
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
          if (o.live && partial) erase();
          o.note('the run was resumed by another worker; its answer starts again');
          break;
        case 'message.completed':
          if (o.live) {
            if (!atLineStart) write('\n');
          } else line(String(event.text ?? ''));
          partial = '';
          break;
        default:
          break;
      }
    },
    /** Ends the output on a new line. */
    finish() {
      if (!atLineStart) write('\n');
    },
  };
}
