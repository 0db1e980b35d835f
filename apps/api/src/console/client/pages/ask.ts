/// <reference lib="dom" />
import { get, post, qs } from '../api';
import { clear, empty, h, when } from '../dom';
import { act, errorSlot, type Page } from '../ctx';

interface RunEvent {
  seq: number;
  kind: string;
  text?: string;
  tool?: string;
  input?: unknown;
  ok?: boolean;
  output_preview?: string;
  reply?: string;
  detail?: string;
}

const TERMINAL = new Set(['run.completed', 'run.failed']);

/**
 * Follows a session's latest run over GET /console/api/stream/attach. When the connection drops before
 * the run's terminal event, it reconnects itself with after_seq = the last seq it showed: the server
 * replays from the next event, so the answer continues with no gap and no duplicate (events at or below
 * that seq are ignored all the same). EventSource's own retry is not used: it would start over from the
 * URL's after_seq, and whether it sends Last-Event-ID is up to the browser.
 */
export function followRun(
  sessionId: string,
  afterSeq: number,
  on: { event(e: RunEvent): void; state(s: 'live' | 'reconnecting' | 'done'): void },
): () => void {
  let last = afterSeq;
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let finished = false;
  let failures = 0;
  const connect = () => {
    const es = new EventSource(`/console/api/stream/attach${qs({ session_id: sessionId, after_seq: last })}`);
    source = es;
    const handle = (m: MessageEvent) => {
      const e = JSON.parse(m.data) as RunEvent;
      failures = 0;
      if (e.seq <= last) return;
      last = e.seq;
      on.event(e);
      if (TERMINAL.has(e.kind)) {
        finished = true;
        es.close();
        on.state('done');
      }
    };
    for (const kind of KINDS) es.addEventListener(kind, handle as EventListener);
    es.onopen = () => on.state('live');
    es.onerror = () => {
      es.close();
      if (finished) return;
      on.state('reconnecting');
      failures++;
      timer = setTimeout(connect, Math.min(200 * 2 ** failures, 5000));
    };
  };
  connect();
  return () => {
    finished = true;
    clearTimeout(timer);
    source?.close();
  };
}

const KINDS = [
  'run.started',
  'run.resumed',
  'message.delta',
  'tool.started',
  'tool.finished',
  'message.completed',
  'run.completed',
  'run.failed',
];

export const askPage: Page = async (ctx, el, params) => {
  const current = params.get('id');
  const sessions = await get<{ sessions: Array<{ id: string; name: string; updated_at: string }> }>(
    '/console/api/sessions',
  );
  const history = current
    ? await get<{
        messages: Array<{ role: string; content: string; created_at: string; run_id: string | null }>;
      }>(`/console/api/history${qs({ session_id: current })}`)
    : { messages: [] };
  let stop: (() => void) | undefined;

  const list = h(
    'nav',
    { class: 'sessions', 'aria-label': 'Sessions' },
    h('a', { href: '/ask', class: 'new', 'aria-current': current ? null : 'page' }, '+ New session'),
    sessions.sessions.length
      ? h(
          'ul',
          {},
          sessions.sessions.map((s) =>
            h(
              'li',
              {},
              h(
                'a',
                {
                  href: `/ask/${encodeURIComponent(s.id)}`,
                  'aria-current': s.id === current ? 'page' : null,
                },
                s.name,
                h('span', { class: 'note' }, when(s.updated_at)),
              ),
            ),
          ),
        )
      : h('p', { class: 'note' }, 'No sessions yet.'),
  );
  const thread = h('div', { class: 'thread', 'aria-live': 'polite', 'data-thread': '' });
  for (const m of history.messages) thread.append(bubble(m.role, m.content));
  if (!history.messages.length)
    thread.append(
      empty(
        'Ask about findings, costs, incidents or the dependency graph: the agent answers from your environment, and shows each tool it uses.',
      ),
    );

  const state = h('p', { class: 'note', role: 'status', 'data-stream-state': '' });
  const slot = errorSlot();
  const prompt = h('textarea', {
    name: 'prompt',
    rows: '3',
    required: true,
    'aria-label': 'Your question',
    placeholder: 'e.g. What are my most expensive open findings?',
  });
  const send = h('button', { type: 'submit' }, 'Ask');
  const form = h('form', { class: 'ask' }, prompt, h('div', { class: 'actions' }, send, state), slot);

  function attach(sessionId: string, afterSeq: number) {
    const answer = bubble('assistant', '');
    answer.dataset.answer = 'live';
    const text = answer.querySelector('.text')!;
    const tools = h('ul', { class: 'tools', 'data-tools': '' });
    answer.prepend(tools);
    thread.append(answer);
    /** Calls still running, oldest first: a tool.finished closes the oldest call of its tool. */
    const running: HTMLElement[] = [];
    stop = followRun(sessionId, afterSeq, {
      event(e) {
        if (e.kind === 'message.delta') text.textContent += e.text ?? '';
        else if (e.kind === 'tool.started') {
          const li = h(
            'li',
            { class: 'tool running', 'data-tool': e.tool },
            h('code', {}, e.tool ?? ''),
            ' ',
            h('span', { class: 'note' }, JSON.stringify(e.input ?? {})),
            ' …',
          );
          running.push(li);
          tools.append(li);
        } else if (e.kind === 'tool.finished') {
          const at = running.findIndex((r) => r.dataset.tool === e.tool);
          const li = at >= 0 ? running.splice(at, 1)[0] : undefined;
          if (li) {
            li.className = `tool ${e.ok ? 'ok' : 'failed'}`;
            li.lastChild!.textContent = e.ok ? ' ✓' : ' ✗';
            if (e.output_preview)
              li.append(h('details', {}, h('summary', {}, 'output'), h('pre', {}, e.output_preview)));
          }
        } else if (e.kind === 'message.completed' && e.text && !text.textContent) text.textContent = e.text;
        else if (e.kind === 'run.completed') {
          if (e.reply) text.textContent = e.reply;
          answer.dataset.answer = 'done';
        } else if (e.kind === 'run.failed') {
          answer.append(h('p', { class: 'error', role: 'alert' }, e.detail ?? 'The run failed.'));
          answer.dataset.answer = 'failed';
        }
        answer.scrollIntoView({ block: 'end' });
      },
      state(s) {
        state.textContent =
          s === 'live'
            ? 'Streaming…'
            : s === 'reconnecting'
              ? 'Connection lost: reconnecting and resuming…'
              : '';
        state.dataset.streamState = s;
        send.disabled = s !== 'done';
      },
    });
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void act(send, slot, async () => {
      const text = prompt.value.trim();
      const run = await post<{ run_id: string; session_id: string }>('/console/api/runs', {
        prompt: text,
        ...(current ? { session_id: current } : {}),
      });
      thread.querySelector('.empty')?.remove();
      thread.append(bubble('user', text));
      prompt.value = '';
      if (!current) {
        // The new session gets its own address; the page re-opens on it and re-attaches there.
        ctx.go(`/ask/${encodeURIComponent(run.session_id)}`);
        return;
      }
      stop?.();
      attach(run.session_id, 0);
    });
  });

  // A run of this session still under way (the page was reloaded or reopened): follow it from where the
  // history ends; its user message is already in the history.
  if (current) {
    const last = history.messages[history.messages.length - 1];
    if (last && last.role === 'user') attach(current, 0);
  }

  clear(
    el,
    h('h1', {}, 'Ask the agent'),
    h(
      'div',
      { class: 'ask-layout' },
      list,
      h(
        'div',
        { class: 'conversation' },
        thread,
        ctx.canWrite ? form : h('p', { class: 'note' }, 'Viewers can read sessions but not ask.'),
      ),
    ),
  );
  return () => stop?.();
};

function bubble(role: string, content: string) {
  return h(
    'div',
    { class: `msg ${role}`, 'data-role': role },
    h('span', { class: 'who' }, role === 'user' ? 'You' : 'Agent'),
    h('div', { class: 'text' }, content),
  );
}
