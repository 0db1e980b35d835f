/// <reference lib="dom" />
import { get, patch, post, qs } from '../api';
import { card, clear, empty, h, pill, when } from '../dom';
import { act, errorSlot, type Page } from '../ctx';
import type { IncidentListT, IncidentT } from '../types';

const STATUSES = ['open', 'investigating', 'mitigated', 'resolved'];
const SEVS = ['SEV1', 'SEV2', 'SEV3', 'SEV4'];
/** Every kind a timeline event has (packages/core/src/incidents). */
const TIMELINE_KINDS = [
  'created',
  'status_changed',
  'severity_changed',
  'title_changed',
  'description_changed',
  'note',
  'linked',
  'alert_attached',
  'alert_resolved',
  'war_room_opened',
  'investigation_started',
  'investigation_completed',
  'investigation_failed',
];

export const incidentsPage: Page = async (ctx, el, params) => {
  const status = params.get('status') ?? '';
  const list = await get<IncidentListT>(`/console/api/incidents${qs({ status, limit: 100 })}`);
  el.append(h('h1', {}, 'Incidents'));
  if (ctx.canWrite) {
    const slot = errorSlot();
    const title = h('input', {
      name: 'title',
      required: true,
      maxlength: '300',
      placeholder: 'e.g. Checkout latency above 2 s',
    });
    const sev = h(
      'select',
      { name: 'severity' },
      SEVS.map((s) => h('option', { value: s, selected: s === 'SEV3' }, s)),
    );
    const submit = h('button', { type: 'submit' }, 'Open incident');
    const form = h(
      'form',
      { class: 'inline', 'aria-label': 'Open an incident' },
      h('label', {}, 'Title', title),
      h('label', {}, 'Severity', sev),
      submit,
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void act(submit, slot, async () => {
        const created = await post<{ id: string }>('/console/api/incidents', {
          title: title.value,
          severity: sev.value,
        });
        ctx.go(`/incidents/${created.id}`);
      });
    });
    el.append(card('Open an incident', form, slot));
  }
  const filter = h(
    'select',
    { 'aria-label': 'Status filter' },
    h('option', { value: '' }, 'all statuses'),
    STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)),
  );
  filter.addEventListener('change', () => ctx.go(`/incidents${qs({ status: filter.value })}`));
  el.append(h('div', { class: 'filters' }, h('label', {}, 'Status', filter)));
  if (!list.incidents.length) {
    el.append(empty('No incidents. Alerts routed by triage open them, or open one above.'));
    return;
  }
  el.append(
    h(
      'table',
      { class: 'table', 'data-table': 'incidents' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Severity', 'Title', 'Status', 'Source', 'Alerts', 'Started'].map((t) => h('th', {}, t)),
        ),
      ),
      h(
        'tbody',
        {},
        list.incidents.map((i) =>
          h(
            'tr',
            { 'data-incident-id': i.id },
            h('td', {}, pill(i.severity, i.severity.toLowerCase())),
            h('td', {}, h('a', { href: `/incidents/${i.id}` }, i.title)),
            h('td', {}, pill(i.status)),
            h('td', {}, i.source),
            h('td', { class: 'num' }, String(i.alert_count)),
            h('td', {}, when(i.started_at)),
          ),
        ),
      ),
    ),
  );
};

/** An incident with its timeline, live over Server-Sent Events (EventSource resumes with Last-Event-ID). */
export const incidentPage: Page = async (ctx, el, params) => {
  const id = params.get('id')!;
  const incident = await get<IncidentT>(`/console/api/incidents/${id}`);
  const slot = errorSlot();
  let statusPill = pill(incident.status);
  const timeline = h('ol', { class: 'timeline', 'data-list': 'timeline', 'aria-live': 'polite' });
  const live = h('span', { class: 'note', role: 'status', 'data-live': '' }, 'connecting…');
  let lastId = 0;
  const source = new EventSource(`/console/api/incidents/${id}/timeline/stream`);
  const onEvent = (m: MessageEvent) => {
    const e = JSON.parse(m.data);
    if (e.id <= lastId) return;
    lastId = e.id;
    if (e.kind === 'status_changed' && e.data?.to) statusPill.replaceWith((statusPill = pill(e.data.to)));
    timeline.append(
      h(
        'li',
        { 'data-event-id': String(e.id), 'data-kind': e.kind },
        h('time', {}, when(e.created_at)),
        ' ',
        pill(e.kind.replace(/_/g, ' '), 'info'),
        ' ',
        h('span', {}, e.body),
        h('span', { class: 'note' }, ` · ${e.actor}`),
        e.data?.session_id
          ? h('a', { href: `/ask/${encodeURIComponent(e.data.session_id)}` }, ' open the agent session')
          : null,
      ),
    );
  };
  source.onmessage = onEvent;
  // The stream names each event by its kind; EventSource delivers named events only to their listeners.
  for (const kind of TIMELINE_KINDS) source.addEventListener(kind, onEvent as EventListener);
  source.onopen = () => (live.textContent = 'live');
  source.onerror = () =>
    (live.textContent = source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…');

  const actions = h('div', { class: 'actions' });
  if (ctx.canWrite) {
    const st = h(
      'select',
      { 'aria-label': 'Incident status', 'data-incident-status': '' },
      STATUSES.map((s) => h('option', { value: s, selected: s === incident.status }, s)),
    );
    st.addEventListener(
      'change',
      () =>
        void act(st as unknown as HTMLButtonElement, slot, () =>
          patch(`/console/api/incidents/${id}`, { status: st.value }),
        ),
    );
    const inv = h('button', { type: 'button', 'data-action': 'investigate' }, 'Investigate with the agent');
    inv.addEventListener('click', () =>
      act(inv, slot, async () => {
        const r = await post<{ session_id: string }>(`/console/api/incidents/${id}/agent-investigate`);
        inv.after(
          h(
            'a',
            { href: `/ask/${encodeURIComponent(r.session_id)}`, class: 'inline-link' },
            ' follow the investigation',
          ),
        );
      }),
    );
    const war = h(
      'button',
      { type: 'button', class: 'secondary', 'data-action': 'war-room' },
      incident.war_room ? 'Join the war room' : 'Open a war room',
    );
    war.addEventListener('click', () =>
      act(war, slot, async () => {
        const room = await post<{ session_id: string }>(`/console/api/incidents/${id}/war-room`);
        ctx.go(`/ask/${encodeURIComponent(room.session_id)}`);
      }),
    );
    actions.append(h('label', { class: 'inline-label' }, 'Status ', st), inv, war);
  }
  const note = h('input', {
    name: 'note',
    'aria-label': 'Add a note to the timeline',
    placeholder: 'Add a note…',
    maxlength: '5000',
  });
  const add = h('button', { type: 'submit', class: 'secondary' }, 'Add note');
  const noteForm = h('form', { class: 'inline' }, note, add);
  noteForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void act(add, slot, async () => {
      await post(`/console/api/incidents/${id}/timeline`, { body: note.value });
      note.value = '';
    });
  });
  clear(
    el,
    h('p', { class: 'crumbs' }, h('a', { href: '/incidents' }, 'Incidents'), ' / ', incident.severity),
    h('h1', {}, incident.title),
    h(
      'p',
      { class: 'meta' },
      pill(incident.severity, incident.severity.toLowerCase()),
      ' ',
      statusPill,
      ` · ${incident.source} · started ${when(incident.started_at)} · ${incident.alert_count} alerts`,
    ),
    incident.description ? h('p', {}, incident.description) : null,
    actions,
    slot,
    incident.war_room
      ? h(
          'p',
          {},
          'War room: ',
          h(
            'a',
            { href: `/ask/${encodeURIComponent(incident.war_room.session_id)}` },
            'open its agent session',
          ),
        )
      : null,
    card('Timeline', h('p', {}, live), timeline, ctx.canWrite ? noteForm : null),
  );
  return () => source.close();
};
