/// <reference lib="dom" />
import { get, post } from '../api';
import { card, empty, h, money, pill, when } from '../dom';
import { act, errorSlot, type Page } from '../ctx';
import type { ReportT } from '../types';

const findingLink = (f: ReportT['sections']['new_findings'][number]) =>
  h(
    'li',
    {},
    pill(f.severity),
    ' ',
    h('a', { href: `/findings/${f.finding_id}` }, f.title),
    h('span', { class: 'note' }, ` ${f.domain}`),
  );

export const reportPage: Page = async (ctx, el) => {
  // The list (newest first) rather than /latest, whose 404 before the first report is an error in the
  // browser's console.
  const latest = () =>
    get<{ reports: ReportT[] }>('/console/api/reports/morning?limit=1').then((r) => r.reports[0] ?? null);
  const report = await latest();
  el.append(h('h1', {}, 'Morning report'));
  const slot = errorSlot();
  if (ctx.canWrite) {
    const b = h(
      'button',
      { type: 'button', class: report ? 'secondary' : '', 'data-action': 'generate' },
      'Generate a report now',
    );
    const status = h('span', { class: 'ok-note', role: 'status' });
    b.addEventListener('click', () =>
      act(b, slot, async () => {
        await post('/console/api/reports/morning');
        status.textContent = 'Generating: the page reloads when it is ready.';
        const before = report?.id;
        for (let i = 0; i < 60; i++) {
          await new Promise((r) => setTimeout(r, 1000));
          const now = await latest().catch(() => null);
          if (now && now.id !== before) return ctx.go('/report');
        }
        status.textContent = 'Still generating: reload later.';
      }),
    );
    el.append(h('div', { class: 'actions' }, b, status), slot);
  }
  if (!report) {
    el.append(
      empty('No morning report yet. The scheduler writes one every morning; generate one now to see it.'),
    );
    return;
  }
  const s = report.sections;
  el.append(
    h(
      'p',
      { class: 'meta' },
      `Generated ${when(report.generated_at)} · covers ${when(report.period.from)} to ${when(report.period.to)}`,
    ),
    h('section', { class: 'card headline', 'data-headline': '' }, h('p', {}, report.headline)),
    h(
      'div',
      { class: 'figures' },
      h(
        'div',
        { class: 'figure' },
        h('span', { class: 'label' }, 'Savings open'),
        h('strong', { class: 'value' }, `${money(s.savings.open_monthly)}/mo`),
      ),
      h(
        'div',
        { class: 'figure' },
        h('span', { class: 'label' }, 'Realized'),
        h('strong', { class: 'value' }, `${money(s.savings.realized_monthly)}/mo`),
      ),
      h(
        'div',
        { class: 'figure' },
        h('span', { class: 'label' }, 'Changes'),
        h(
          'strong',
          { class: 'value' },
          String(s.drift.totals.added + s.drift.totals.changed + s.drift.totals.removed),
        ),
      ),
      h(
        'div',
        { class: 'figure' },
        h('span', { class: 'label' }, 'Incidents open'),
        h('strong', { class: 'value' }, String(s.incidents.open.length)),
      ),
    ),
    h(
      'div',
      { class: 'grid2' },
      card(
        'Fix first',
        s.top_clusters.length
          ? h(
              'ol',
              {},
              s.top_clusters.map((c) =>
                h(
                  'li',
                  {},
                  pill(c.severity),
                  ' ',
                  h('a', { href: `/findings/${c.finding_id}` }, c.title),
                  h('div', { class: 'note' }, c.why),
                ),
              ),
            )
          : empty('Nothing to fix first.'),
      ),
      card(
        'New findings',
        s.new_findings.length
          ? h('ul', { class: 'results' }, s.new_findings.slice(0, 12).map(findingLink))
          : empty('No new findings in this period.'),
      ),
      card(
        'Resolved',
        s.resolved_findings.length
          ? h('ul', { class: 'results' }, s.resolved_findings.map(findingLink))
          : empty('Nothing resolved in this period.'),
      ),
      card(
        'Regressed',
        s.regressed_findings.length
          ? h('ul', { class: 'results' }, s.regressed_findings.map(findingLink))
          : empty('No regression.'),
      ),
      card(
        'Changes in the inventory',
        h(
          'p',
          { class: 'note' },
          `${s.drift.totals.added} added · ${s.drift.totals.changed} changed · ${s.drift.totals.removed} removed`,
        ),
        h(
          'ul',
          { class: 'results' },
          [
            ...s.drift.added.map((d) => ['added', d] as const),
            ...s.drift.changed.map((d) => ['changed', d] as const),
            ...s.drift.removed.map((d) => ['removed', d] as const),
          ]
            .slice(0, 12)
            .map(([k, d]) =>
              h(
                'li',
                {},
                pill(k, 'info'),
                ' ',
                d.name ?? d.native_id,
                h(
                  'span',
                  { class: 'note' },
                  ` ${d.type}${d.actor ? ' by ' + String(d.actor).split('/').pop() : ''}`,
                ),
              ),
            ),
        ),
      ),
      card(
        'Incidents',
        h(
          'p',
          { class: 'note' },
          `${s.incidents.opened.length} opened · ${s.incidents.resolved.length} resolved · ${s.incidents.open.length} open`,
        ),
      ),
    ),
  );
};
