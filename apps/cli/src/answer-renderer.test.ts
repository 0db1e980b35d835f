import { createColors } from 'picocolors';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@opsi/sdk';
import { createAnswerRenderer } from './answer-renderer';

/**
 * A small terminal: rows of `columns` cells, wrapping, and the sequences the renderer writes (\r, \n,
 * ESC[2K clear the row, ESC[nF up n rows to column 0, ESC[J clear below). Answers the visible text.
 */
function terminal(columns: number) {
  const rows: string[] = [''];
  let row = 0;
  let col = 0;
  return {
    write(text: string) {
      for (let i = 0; i < text.length; i++) {
        const ch = text[i]!;
        if (ch === '\x1b') {
          // eslint-disable-next-line no-control-regex -- the escape sequences under test
          const m = /^\x1b\[(\d*)([A-Za-z])/.exec(text.slice(i))!;
          const n = Number(m[1] || '1');
          if (m[2] === 'K') rows[row] = '';
          else if (m[2] === 'F') {
            row = Math.max(0, row - n);
            col = 0;
          } else if (m[2] === 'J') {
            rows[row] = rows[row]!.slice(0, col);
            rows.length = row + 1;
          }
          i += m[0].length - 1;
        } else if (ch === '\r') col = 0;
        else if (ch === '\n') {
          row += 1;
          col = 0;
          rows[row] ??= '';
        } else {
          if (col === columns) {
            row += 1;
            col = 0;
            rows[row] ??= '';
          }
          rows[row] = rows[row]!.slice(0, col).padEnd(col) + ch + rows[row]!.slice(col + 1);
          col += 1;
        }
      }
    },
    screen: () => rows.join('\n'),
  };
}

let seq = 0;
const ev = (kind: RunEvent['kind'], fields: Record<string, unknown> = {}): RunEvent => ({
  seq: ++seq,
  run_id: 'r',
  kind,
  at: 'now',
  ...fields,
});

function setup(live: boolean, columns = 20) {
  const term = terminal(columns);
  const notes: string[] = [];
  const r = createAnswerRenderer({
    live,
    columns: () => columns,
    c: createColors(false),
    write: term.write,
    note: (n) => notes.push(n),
  });
  return { term, notes, r };
}

describe('the answer renderer', () => {
  it('on a terminal, run.resumed erases the partial answer (wrapped rows too) and the answer starts again', () => {
    const { term, notes, r } = setup(true, 20);
    r.handle(ev('run.started'));
    r.handle(ev('tool.started', { tool: 'list_findings', input: { limit: 2 } }));
    r.handle(ev('tool.finished', { tool: 'list_findings', ok: true, output_preview: 'two' }));
    r.handle(ev('message.delta', { text: 'The first attempt wrote ' }));
    r.handle(ev('message.delta', { text: 'this much\nand a second line' }));
    r.handle(ev('run.resumed', { attempt: 2, after_seq: 5 }));
    r.handle(ev('message.delta', { text: 'The answer: 42.' }));
    r.handle(ev('message.completed', { text: 'The answer: 42.' }));
    r.handle(ev('run.completed', { reply: 'The answer: 42.' }));
    r.finish();
    expect(term.screen()).toBe('↳ list_findings {"li\nmit":2}\n  ✓ list_findings tw\no\nThe answer: 42.\n');
    expect(notes).toEqual(['the run was resumed by another worker; its answer starts again']);
  });

  it('on a terminal, a resume before any answer erases nothing', () => {
    const { term, r } = setup(true);
    r.handle(ev('run.resumed', { attempt: 2, after_seq: 1 }));
    r.handle(ev('message.delta', { text: 'ok' }));
    r.handle(ev('message.completed', { text: 'ok' }));
    r.finish();
    expect(term.screen()).toBe('ok\n');
  });

  it('elsewhere, prints tool lines and the completed answer only, never a partial one', () => {
    const { term, r } = setup(false, 200);
    r.handle(ev('message.delta', { text: 'partial that is lost' }));
    r.handle(ev('run.resumed', { attempt: 2, after_seq: 1 }));
    r.handle(ev('tool.started', { tool: 'get_finding', input: { id: 'f1' } }));
    r.handle(ev('tool.finished', { tool: 'get_finding', ok: false, output_preview: 'not found' }));
    r.handle(ev('message.delta', { text: 'Final.' }));
    r.handle(ev('message.completed', { text: 'Final.' }));
    r.finish();
    expect(term.screen()).toBe('↳ get_finding {"id":"f1"}\n  ✗ get_finding not found\nFinal.\n');
  });
});
