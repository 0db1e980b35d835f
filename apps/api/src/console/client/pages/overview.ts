/// <reference lib="dom" />
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { get } from '../api';
import { card, empty, h, money, pill, when } from '../dom';
import { DOMAINS, SEVERITIES, sevRank, type Page } from '../ctx';
import { UNRESOLVED_FINDING_STATUSES } from '@opsi/contracts/vocabulary';

interface Overview {
  open_findings: number;
  by_domain: Record<string, number>;
  by_severity: Record<string, number>;
  estimated_savings: { monthly: number; grounded: number; estimated: number; resources: number };
  realized_savings: { this_month: number; total: number; resolved_plans: number };
  coverage: {
    resources: number;
    types: number;
    accounts: number;
    regions: number;
    detectors: number;
    last_scan: {
      id: string;
      status: string;
      finished_at: string | null;
      created_at: string;
      partial: boolean;
      warnings: Array<{ service: string; action: string; region: string; code: string; message: string }>;
      missing_permissions: string[];
    } | null;
  };
}
interface FindingItem {
  id: string;
  title: string;
  severity: string;
  domain: string;
  status: string;
  group_id: string;
  savings: number;
  detected_at: string;
  resource_count: number;
}
interface ResolvedItem {
  group_id: string;
  finding_id: string;
  resolved_at: string | null;
  savings: number;
}

/** A cluster counts as open while any of it is unresolved (its duplicates included). */
const OPEN = new Set<string>(UNRESOLVED_FINDING_STATUSES);
const DAY = 86_400_000;

/**
 * Open and realized monthly savings per day. A cluster's findings often price the same resources, so a
 * cluster counts once, at its largest finding, from the day it was first detected while any of it is
 * open; realized savings count from the day they were resolved.
 */
export function savingsSeries(findings: FindingItem[], resolved: ResolvedItem[], now = Date.now()) {
  const clusters = new Map<string, { since: number; savings: number }>();
  for (const f of findings.filter((x) => OPEN.has(x.status))) {
    const at = Date.parse(f.detected_at);
    const c = clusters.get(f.group_id);
    if (!c) clusters.set(f.group_id, { since: at, savings: f.savings });
    else {
      c.since = Math.min(c.since, at);
      c.savings = Math.max(c.savings, f.savings);
    }
  }
  const dates = [
    ...[...clusters.values()].map((c) => c.since),
    ...resolved.map((r) => Date.parse(r.resolved_at ?? '')),
  ].filter((t) => Number.isFinite(t));
  const start = Math.floor(Math.min(now - 7 * DAY, ...dates) / DAY) * DAY;
  const days: number[] = [];
  for (let t = start; t <= now + DAY; t += DAY) days.push(t);
  const open = days.map((d) =>
    [...clusters.values()].filter((c) => c.since < d + DAY).reduce((s, c) => s + c.savings, 0),
  );
  const realized = days.map((d) =>
    resolved
      .filter((r) => r.resolved_at && Date.parse(r.resolved_at) < d + DAY)
      .reduce((s, r) => s + r.savings, 0),
  );
  return { days: days.map((d) => d / 1000), open, realized };
}

function figure(id: string, label: string, value: string, sub?: string) {
  return h(
    'div',
    { class: 'figure', 'data-figure': id },
    h('span', { class: 'label' }, label),
    h('strong', { class: 'value' }, value),
    sub ? h('span', { class: 'sub' }, sub) : null,
  );
}

function bars(
  title: string,
  id: string,
  counts: Record<string, number>,
  keys: readonly string[],
  link: (k: string) => string,
) {
  const max = Math.max(1, ...keys.map((k) => counts[k] ?? 0));
  return card(
    title,
    h(
      'ul',
      { class: 'bars', 'data-bars': id },
      keys.map((k) =>
        h(
          'li',
          { 'data-key': k },
          h('a', { href: link(k), class: 'bar-label' }, k),
          h('progress', {
            max: String(max),
            value: String(counts[k] ?? 0),
            'aria-label': `${k}: ${counts[k] ?? 0}`,
            class: `sev-${k}`,
          }),
          h('span', { class: 'count' }, String(counts[k] ?? 0)),
        ),
      ),
    ),
  );
}

export const overviewPage: Page = async (ctx, el) => {
  const [o, list, resolved] = await Promise.all([
    get<Overview>('/console/api/pulse/overview'),
    get<{ findings: FindingItem[] }>('/console/api/pulse/findings?sort_by=savings'),
    get<{ resolved: ResolvedItem[] }>('/console/api/pulse/resolved'),
  ]);
  const scan = o.coverage.last_scan;
  el.append(h('h1', {}, 'Overview'));
  if (!scan && o.coverage.resources === 0) {
    el.append(
      empty(
        'No environment connected yet. Connect one, then run a first scan:',
        h(
          'pre',
          {},
          `npm run admin -- env connect --tenant ${ctx.tenant} --demo\nnpm run admin -- scan --tenant ${ctx.tenant} --wait`,
        ),
      ),
    );
    return;
  }
  const running = scan && scan.status !== 'completed' && scan.status !== 'failed';
  el.append(
    h(
      'div',
      { class: 'figures' },
      figure('open_findings', 'Open findings', String(o.open_findings)),
      figure(
        'savings_open',
        'Savings open',
        `${money(o.estimated_savings.monthly)}/mo`,
        `${o.estimated_savings.resources} resources`,
      ),
      figure(
        'savings_realized',
        'Savings realized',
        `${money(o.realized_savings.total)}/mo`,
        `${money(o.realized_savings.this_month)} this month · ${o.realized_savings.resolved_plans} plans`,
      ),
      figure(
        'resources',
        'Resources',
        String(o.coverage.resources),
        `${o.coverage.accounts} accounts · ${o.coverage.regions} regions`,
      ),
      h(
        'div',
        { class: 'figure', 'data-figure': 'last_scan' },
        h('span', { class: 'label' }, 'Last scan'),
        h('strong', { class: 'value' }, scan ? (scan.partial ? 'partial' : scan.status) : 'none'),
        h('span', { class: 'sub' }, scan ? when(scan.finished_at ?? scan.created_at) : 'no scan yet'),
        running ? h('progress', { 'aria-label': 'Scan in progress' }) : null,
      ),
    ),
  );
  if (scan?.partial) el.append(partialScanNotice(scan));
  if (o.open_findings === 0)
    el.append(
      empty(
        running
          ? 'A scan is running: findings appear when it finishes.'
          : 'No open findings: nothing to fix right now.',
      ),
    );
  el.append(
    h(
      'div',
      { class: 'grid2' },
      bars('Open findings by domain', 'domain', o.by_domain, DOMAINS, (k) => `/findings?domain=${k}`),
      bars(
        'Open findings by severity',
        'severity',
        o.by_severity,
        SEVERITIES,
        (k) => `/findings?severity=${k}`,
      ),
    ),
  );
  const chartBox = h('div', {
    class: 'chart',
    role: 'img',
    'aria-label': 'Monthly savings open and realized over time',
  });
  el.append(
    card(
      'Savings over time (per month)',
      chartBox,
      h(
        'p',
        { class: 'note' },
        'Each cluster counted once, at its largest finding, from the day it was detected. The figure above counts each resource once, so the two can differ.',
      ),
    ),
  );

  // Top clusters: one row per group of open findings, most severe then largest savings first.
  const groups = new Map<string, { first: FindingItem; count: number; savings: number; resources: number }>();
  for (const f of list.findings.filter((f) => OPEN.has(f.status))) {
    const g = groups.get(f.group_id);
    if (!g) groups.set(f.group_id, { first: f, count: 1, savings: f.savings, resources: f.resource_count });
    else {
      g.count++;
      g.savings += f.savings;
      g.resources += f.resource_count;
      if (sevRank(f.severity) < sevRank(g.first.severity)) g.first = f;
    }
  }
  const top = [...groups.values()]
    .sort((a, b) => sevRank(a.first.severity) - sevRank(b.first.severity) || b.savings - a.savings)
    .slice(0, 6);
  el.append(
    card(
      'Top clusters to fix',
      top.length
        ? h(
            'table',
            { class: 'table', 'data-table': 'clusters' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', {}, 'Severity'),
                h('th', {}, 'Finding'),
                h('th', {}, 'Domain'),
                h('th', {}, 'Findings'),
                h('th', {}, 'Savings/mo'),
              ),
            ),
            h(
              'tbody',
              {},
              top.map((g) =>
                h(
                  'tr',
                  {},
                  h('td', {}, pill(g.first.severity)),
                  h('td', {}, h('a', { href: `/findings/${g.first.id}` }, g.first.title)),
                  h('td', {}, g.first.domain),
                  h('td', {}, String(g.count)),
                  h('td', { class: 'num' }, money(g.savings)),
                ),
              ),
            ),
          )
        : empty('No open clusters.'),
    ),
  );

  const series = savingsSeries(list.findings, resolved.resolved);
  let plot: uPlot | undefined;
  const draw = () => {
    plot?.destroy();
    const width = Math.max(320, chartBox.clientWidth || 600);
    plot = new uPlot(
      {
        width,
        height: 220,
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, vals) => vals.map((v) => `$${v}`), size: 70 }],
        series: [
          {},
          { label: 'Open', stroke: '#b42318', width: 2, fill: 'rgba(180,35,24,.08)' },
          { label: 'Realized', stroke: '#067647', width: 2, fill: 'rgba(6,118,71,.10)' },
        ],
      },
      [series.days, series.open, series.realized],
      chartBox,
    );
  };
  requestAnimationFrame(draw);
  const timer = running ? setTimeout(() => ctx.go('/overview'), 3000) : undefined;
  const onResize = () => draw();
  window.addEventListener('resize', onResize);
  return () => {
    clearTimeout(timer);
    window.removeEventListener('resize', onResize);
    plot?.destroy();
  };
};

/** What a partial scan could not read, and the IAM actions that would let it. */
function partialScanNotice(scan: NonNullable<Overview['coverage']['last_scan']>): HTMLElement {
  const missing = scan.missing_permissions;
  const skipped = [...new Set(scan.warnings.filter((w) => !missing.includes(w.action)).map((w) => w.region))];
  return card(
    `partial: ${missing.length} permission${missing.length === 1 ? '' : 's'} missing`,
    h(
      'div',
      { 'data-partial-scan': scan.id },
      h(
        'p',
        { class: 'note' },
        'The last scan could not read everything; what it could not read stays as the previous scan saw it, and no finding is drawn from it. Add these read-only actions to the scanning identity (docs/aws-iam-policy.json has them all):',
      ),
      missing.length ? h('pre', { 'data-missing-permissions': '' }, missing.join('\n')) : null,
      skipped.length
        ? h('p', { class: 'note' }, `Regions skipped (not enabled for the account): ${skipped.join(', ')}`)
        : null,
    ),
  );
}
