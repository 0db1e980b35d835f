/// <reference lib="dom" />
import { get, patch, post, qs } from '../api';
import { card, clear, empty, h, money, pill, when } from '../dom';
import { DOMAINS, SEVERITIES, act, errorSlot, showError, type Page } from '../ctx';
import type { AuditStepT, AuditTrailT, FindingDetailT, FindingListT, StepRerunT } from '../types';
import { LIFECYCLE_STATUSES } from '@opsi/contracts/vocabulary';

const STATUSES = LIFECYCLE_STATUSES;

function select(name: string, label: string, options: readonly string[], value: string | null, all = 'all') {
  return h(
    'label',
    {},
    label,
    h(
      'select',
      { name },
      h('option', { value: '' }, all),
      options.map((o) => h('option', { value: o, selected: o === value }, o)),
    ),
  );
}

export const findingsPage: Page = async (ctx, el, params) => {
  const filter = {
    domain: params.get('domain'),
    severity: params.get('severity'),
    status: params.get('status'),
    sort_by: params.get('sort_by') ?? 'severity',
    sort_dir: params.get('sort_dir') ?? 'desc',
  };
  const list = await get<FindingListT>(`/console/api/pulse/findings${qs(filter)}`);
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filter findings' },
    select('domain', 'Domain', DOMAINS, filter.domain),
    select('severity', 'Severity', SEVERITIES, filter.severity),
    select('status', 'Status', [...STATUSES, 'confirmed'], filter.status),
    select(
      'sort_by',
      'Sort by',
      ['severity', 'date', 'savings', 'effort', 'status'],
      filter.sort_by,
      'severity',
    ),
    select('sort_dir', 'Order', ['desc', 'asc'], filter.sort_dir, 'desc'),
  );
  form.addEventListener('change', () => {
    const data = new FormData(form);
    const next: Record<string, string> = {};
    for (const [k, v] of data) if (v) next[k] = String(v);
    // The defaults stay out of the address.
    if (next.sort_by === 'severity') delete next.sort_by;
    if (next.sort_dir === 'desc') delete next.sort_dir;
    ctx.go(`/findings${qs(next)}`);
  });
  el.append(h('h1', {}, 'Findings'), form);
  if (list.findings.length === 0) {
    el.append(
      empty(
        Object.values(filter).some((v) => v && v !== 'severity' && v !== 'desc')
          ? 'No finding matches these filters: widen them.'
          : 'No findings yet: connect an environment and run a scan (npm run admin -- scan --tenant <slug> --wait).',
      ),
    );
    return;
  }
  const slot = errorSlot();
  el.append(
    h('p', { class: 'note', 'data-count': String(list.findings.length) }, `${list.findings.length} findings`),
    slot,
    h(
      'table',
      { class: 'table', 'data-table': 'findings' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Severity', 'Title', 'Domain', 'Resources', 'Savings/mo', 'Detected', 'Status'].map((t) =>
            h('th', { scope: 'col' }, t),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        list.findings.map((f) =>
          h(
            'tr',
            { 'data-finding-id': f.id },
            h('td', {}, pill(f.severity)),
            h(
              'td',
              {},
              h('a', { href: `/findings/${f.id}` }, f.title),
              f.regressed ? pill('regressed', 'critical') : null,
            ),
            h('td', {}, f.domain),
            h('td', { class: 'num' }, String(f.resource_count)),
            h('td', { class: 'num' }, f.savings ? money(f.savings) : '—'),
            h('td', {}, when(f.detected_at)),
            h(
              'td',
              {},
              ctx.canWrite ? statusSelect(f.id, f.status, slot, `Status of ${f.title}`) : pill(f.status),
            ),
          ),
        ),
      ),
    ),
  );
};

/** A finding's status control; `label` names the finding in a list, where every row has one. */
function statusSelect(id: string, status: string, slot: HTMLElement, label = 'Status') {
  const sel = h(
    'select',
    { 'aria-label': label, 'data-status-of': id },
    (STATUSES.includes(status as never) ? STATUSES : [status, ...STATUSES]).map((s) =>
      h('option', { value: s, selected: s === status, disabled: s === 'confirmed' }, s),
    ),
  );
  sel.addEventListener('change', async () => {
    slot.textContent = '';
    sel.disabled = true;
    try {
      await patch(`/console/api/pulse/findings/${id}/status`, { status: sel.value });
      sel.dataset.saved = sel.value;
    } catch (e) {
      showError(slot, e);
    } finally {
      sel.disabled = false;
    }
  });
  return sel;
}

function rowsTable(rows: Record<string, unknown>[]) {
  if (!rows.length) return h('p', { class: 'note' }, 'No rows.');
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))].slice(0, 8);
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'table compact' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          cols.map((c) => h('th', {}, c)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.slice(0, 20).map((r) =>
          h(
            'tr',
            {},
            cols.map((c) =>
              h(
                'td',
                {},
                typeof r[c] === 'object' && r[c] !== null ? JSON.stringify(r[c]) : String(r[c] ?? ''),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

export const findingPage: Page = async (ctx, el, params) => {
  const id = params.get('id')!;
  const [f, audit] = await Promise.all([
    get<FindingDetailT>(`/api/pulse/findings/${id}`),
    get<AuditTrailT>(`/api/pulse/findings/${id}/audit`),
  ]);
  const slot = errorSlot();
  const actions = h('div', { class: 'actions' });
  if (ctx.canWrite) {
    const planBtn = h('button', { type: 'button', 'data-action': 'plan' }, 'Resolution plan');
    planBtn.addEventListener('click', () =>
      act(planBtn, slot, async () => {
        const plan = await post<{ id: string }>(`/api/pulse/findings/${id}/resolution-plan`);
        ctx.go(`/plans/${plan.id}`);
      }),
    );
    const reBtn = h(
      'button',
      { type: 'button', class: 'secondary', 'data-action': 'reinvestigate' },
      'Reinvestigate',
    );
    const reNote = h('span', { class: 'ok-note', role: 'status' });
    reBtn.addEventListener('click', () =>
      act(reBtn, slot, async () => {
        const job = await post<{ job_id: string; status: string }>(`/api/pulse/findings/${id}/reinvestigate`);
        reNote.textContent = `Reinvestigation ${job.status} (job ${job.job_id}); reload to see its result.`;
      }),
    );
    actions.append(
      planBtn,
      reBtn,
      h('label', { class: 'inline-label' }, 'Status ', statusSelect(id, f.status, slot)),
      reNote,
    );
  }
  el.append(
    h('p', { class: 'crumbs' }, h('a', { href: '/findings' }, 'Findings'), ' / ', f.check_id),
    h('h1', {}, f.title),
    h(
      'p',
      { class: 'meta' },
      pill(f.severity),
      ' ',
      pill(f.status),
      ' ',
      f.domain,
      ' · detected ',
      when(f.detected_at),
      f.regressed ? pill('regressed', 'critical') : null,
    ),
    actions,
    slot,
    card('What was found', h('p', {}, f.narrative), h('p', { class: 'note' }, f.run_reasoning)),
  );
  if (f.recommendation)
    el.append(
      card(
        'Recommendation',
        h('p', {}, f.recommendation.rationale),
        h(
          'p',
          { class: 'note' },
          `Effort ${f.recommendation.effort} · saves ${money(f.recommendation.savings)}/mo · ${f.recommendation.action_type}`,
        ),
      ),
    );
  el.append(
    card(
      'Resources',
      h(
        'table',
        { class: 'table', 'data-table': 'resources' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Name', 'Type', 'Account / region', 'Cost/mo', 'Action', ''].map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          f.resources.map((r) =>
            h(
              'tr',
              {},
              h('td', {}, r.name ?? r.native_id, h('div', { class: 'note mono' }, r.native_id)),
              h('td', {}, r.type),
              h('td', {}, `${r.account_id} / ${r.region}`),
              h('td', { class: 'num' }, r.monthly_cost == null ? '—' : money(r.monthly_cost)),
              h('td', {}, r.action_type ?? ''),
              h(
                'td',
                {},
                r.console_url
                  ? h(
                      'a',
                      { href: r.console_url, target: '_blank', rel: 'noopener noreferrer' },
                      'AWS console ↗',
                    )
                  : '',
              ),
            ),
          ),
        ),
      ),
    ),
  );
  const s = audit.summary;
  el.append(
    card(
      'Evidence trail',
      h(
        'p',
        { class: 'note' },
        `${s.total_steps} steps · ${s.total_queries} queries · ${s.failures} failures · ${s.self_corrections} self-corrections`,
      ),
      h(
        'ol',
        { class: 'steps', 'data-list': 'evidence' },
        audit.steps.map((step) => evidenceStep(id, step, ctx.canWrite)),
      ),
    ),
  );
  el.append(
    card(
      'Group history',
      h(
        'ol',
        { class: 'timeline', 'data-list': 'history' },
        (f.group?.history ?? []).map((e) =>
          h(
            'li',
            {},
            h('time', {}, when(e.at)),
            ' ',
            h('strong', {}, e.kind),
            ' ',
            e.status ? pill(e.status) : null,
            ' ',
            h('span', { class: 'note' }, e.agent ?? ''),
            e.finding_id !== id
              ? h('a', { href: `/findings/${e.finding_id}` }, ' (another finding of the group)')
              : null,
          ),
        ),
      ),
    ),
  );
};

/** One step of the evidence trail; a viewer (who may not re-run: the re-run is a POST of /api/pulse) gets no Run again. */
function evidenceStep(findingId: string, step: AuditStepT, canWrite: boolean) {
  const live = h('div', { class: 'live', 'aria-live': 'polite' });
  const slot = errorSlot();
  let button: HTMLButtonElement | null = null;
  if (step.rerunnable && canWrite) {
    button = h(
      'button',
      { type: 'button', class: 'secondary small', 'data-rerun': String(step.seq) },
      'Run again',
    );
    const b = button;
    b.addEventListener('click', () =>
      act(b, slot, async () => {
        const r = await post<StepRerunT>(`/api/pulse/findings/${findingId}/audit/${step.seq}/run`);
        clear(
          live,
          h(
            'p',
            { class: r.differs ? 'differs' : 'same', 'data-differs': String(r.differs) },
            r.differs
              ? `Differs from the recorded result: ${r.row_count} rows now, ${r.recorded_row_count} recorded.`
              : `Same as recorded: ${r.row_count} rows.`,
            ` Ran ${when(r.executed_at)} in ${r.duration_ms} ms${r.truncated ? ' (truncated)' : ''}.`,
          ),
          rowsTable(r.rows),
        );
      }),
    );
  }
  return h(
    'li',
    { 'data-seq': String(step.seq) },
    h(
      'div',
      { class: 'step-head' },
      h('strong', {}, `${step.seq}. ${step.title}`),
      ' ',
      pill(
        step.status === 'success' ? 'ok' : step.status,
        step.status === 'success' ? 'resolved' : 'critical',
      ),
      step.is_self_correction ? pill('self-correction', 'medium') : null,
      h(
        'span',
        { class: 'note' },
        ` ${step.tool_name} · ${step.row_count ?? 0} rows · ${step.duration_ms ?? 0} ms`,
      ),
      button,
    ),
    step.query_sql
      ? h(
          'details',
          { 'aria-label': `The exact query of step ${step.seq}` },
          h('summary', {}, 'The exact query'),
          h('pre', { class: 'sql' }, step.query_sql),
        )
      : null,
    step.error_message ? h('p', { class: 'error' }, step.error_message) : null,
    Array.isArray(step.result_preview) && step.result_preview.length
      ? h(
          'details',
          { 'aria-label': `Recorded result of step ${step.seq}` },
          h('summary', {}, 'Recorded result'),
          rowsTable(step.result_preview),
        )
      : null,
    slot,
    live,
  );
}
