/// <reference lib="dom" />
// The dependency graph: search a resource, draw its blast radius ring by ring (depth), risks in red.
// Cytoscape.js is a chunk of its own, loaded when this page is opened.
import cytoscape from 'cytoscape';
import { get, qs } from '../api';
import { card, empty, h, pill } from '../dom';
import type { Page } from '../ctx';
import type { BlastRadiusT, GraphRisksT, GraphSearchT, GraphSummaryT } from '../types';

// Cytoscape adds a <style> element unless one with this id exists; the CSP forbids inline style, and
// console.css already positions the container, so an empty marker stands in for it.
function markCytoscapeStyled() {
  if (!document.getElementById('__________cytoscape_stylesheet'))
    document.head.append(
      h('meta', { id: '__________cytoscape_stylesheet', name: 'cytoscape-styled', content: 'console.css' }),
    );
}

export const graphPage: Page = async (ctx, el, params) => {
  const q = params.get('q') ?? '';
  const focus = params.get('resource');
  const depth = Number(params.get('depth') ?? 3);
  const input = h('input', {
    name: 'q',
    value: q,
    required: true,
    placeholder: 'name, id or ARN, e.g. nat',
    'aria-label': 'Search a resource',
  });
  const depthSel = h(
    'select',
    { name: 'depth', 'aria-label': 'Depth' },
    [1, 2, 3, 4, 5].map((d) => h('option', { value: String(d), selected: d === depth }, `depth ${d}`)),
  );
  const form = h(
    'form',
    { class: 'inline', role: 'search' },
    h('label', {}, 'Resource', input),
    h('label', {}, 'Blast radius', depthSel),
    h('button', { type: 'submit' }, 'Search'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.go(`/graph${qs({ q: input.value.trim(), depth: depthSel.value })}`);
  });
  depthSel.addEventListener(
    'change',
    () => focus && ctx.go(`/graph${qs({ q, resource: focus, depth: depthSel.value })}`),
  );
  el.append(h('h1', {}, 'Graph'), form);

  const [summary, results, risks] = await Promise.all([
    get<GraphSummaryT>('/console/api/graph/summary').catch(() => null),
    q
      ? get<GraphSearchT>(`/console/api/graph/search${qs({ q, limit: 20 })}`)
      : Promise.resolve<GraphSearchT>({ results: [] }),
    get<GraphRisksT>('/console/api/graph/risks').catch((): GraphRisksT => ({ risks: [] })),
  ]);
  const risky = new Map<string, string>();
  for (const r of risks.risks) for (const res of r.resources ?? []) risky.set(res.id, r.title);

  if (summary && summary.nodes === 0)
    el.append(empty('The graph is empty: connect an environment and run a scan first.'));
  if (q) {
    el.append(
      card(
        `Results for “${q}”`,
        results.results.length
          ? h(
              'ul',
              { class: 'results', 'data-list': 'results' },
              results.results.map((r) =>
                h(
                  'li',
                  {},
                  h(
                    'a',
                    {
                      href: `/graph${qs({ q, resource: r.id, depth })}`,
                      'data-resource': r.id,
                      'aria-current': r.id === focus ? 'true' : null,
                    },
                    r.name ?? r.native_id,
                  ),
                  h('span', { class: 'note' }, ` ${r.type} · ${r.region}`),
                  r.open_findings ? pill(`${r.open_findings} findings`, 'high') : null,
                  risky.has(r.id) ? pill('risk', 'critical') : null,
                ),
              ),
            )
          : empty('No resource matches: try part of a name, an id or an ARN.'),
      ),
    );
  } else el.append(empty('Search a resource to see what fails with it: its blast radius, drawn by depth.'));

  let cy: cytoscape.Core | undefined;
  if (focus) {
    const blast = await get<BlastRadiusT>(`/console/api/graph/blast-radius/${focus}${qs({ depth })}`);
    const box = h('div', {
      class: 'graph',
      role: 'img',
      'aria-label': `Blast radius of ${blast.resource.name ?? blast.resource.native_id}: ${blast.total} resources`,
    });
    const byDepth = Object.entries(blast.by_depth as Record<string, number>);
    el.append(
      card(
        `Blast radius of ${blast.resource.name ?? blast.resource.native_id}`,
        h(
          'p',
          { class: 'note', 'data-blast-total': String(blast.total) },
          `${blast.total} impacted resources · `,
          byDepth.map(([d, n]) => `depth ${d}: ${n}`).join(' · '),
          ` · ${[...risky.keys()].filter((id) => id === focus || blast.impacted.some((i) => i.id === id)).length} in a known risk`,
        ),
        box,
        h(
          'p',
          { class: 'legend' },
          pill('the resource', 'info'),
          ' ',
          pill('fails', 'high'),
          ' ',
          pill('degrades', 'medium'),
          ' ',
          pill('in a risk', 'critical'),
        ),
        blast.impacted.length
          ? h(
              'table',
              { class: 'table compact', 'data-table': 'impacted' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Depth', 'Resource', 'Type', 'Impact', 'Via'].map((t) => h('th', {}, t)),
                ),
              ),
              h(
                'tbody',
                {},
                blast.impacted.map((i) =>
                  h(
                    'tr',
                    {},
                    h('td', {}, String(i.depth)),
                    h('td', {}, i.name ?? i.native_id, risky.has(i.id) ? pill('risk', 'critical') : null),
                    h('td', {}, i.type),
                    h('td', {}, i.impact),
                    h('td', {}, i.via.join(' → ')),
                  ),
                ),
              ),
            )
          : empty('Nothing depends on this resource in the graph.'),
      ),
    );
    markCytoscapeStyled();
    // A depth with many resources would overlap its labels: theirs show on hover and selection.
    const perDepth = new Map<number, number>();
    for (const i of blast.impacted) perDepth.set(i.depth, (perDepth.get(i.depth) ?? 0) + 1);
    const crowded = (depth: number) => (perDepth.get(depth) ?? 0) > 12;
    const nodes = [
      {
        data: {
          id: blast.resource.id,
          label: blast.resource.name ?? blast.resource.native_id,
          depth: 0,
          kind: 'root',
          risk: risky.has(blast.resource.id) ? 1 : 0,
        },
      },
      ...blast.impacted.map((i) => ({
        classes: crowded(i.depth) ? 'crowded' : '',
        data: {
          id: i.id,
          label: i.name ?? i.native_id,
          depth: i.depth,
          kind: i.impact,
          risk: risky.has(i.id) ? 1 : 0,
        },
      })),
    ];
    const edges = new Map<string, { data: { id: string; source: string; target: string } }>();
    for (const i of blast.impacted) {
      const [a, b] = i.path.slice(-2);
      if (a && b) edges.set(`${a}>${b}`, { data: { id: `${a}>${b}`, source: a, target: b } });
    }
    requestAnimationFrame(() => {
      cy = cytoscape({
        container: box,
        elements: [...nodes, ...edges.values()],
        // One row per depth, the resource on top: what fails first, then what fails with it.
        layout: {
          name: 'breadthfirst',
          directed: true,
          roots: [blast.resource.id],
          spacingFactor: 1.1,
          animate: false,
        },
        style: [
          {
            selector: 'node',
            style: {
              label: 'data(label)',
              'font-size': 10,
              color: '#1d2330',
              'background-color': '#8893a7',
              width: 16,
              height: 16,
              'text-valign': 'bottom',
              'text-margin-y': 3,
            },
          },
          {
            selector: 'node[kind = "root"]',
            style: { 'background-color': '#2456d8', width: 26, height: 26, 'font-weight': 'bold' },
          },
          { selector: 'node[kind = "fails"]', style: { 'background-color': '#e26d16' } },
          { selector: 'node[kind = "degrades"]', style: { 'background-color': '#d9a400' } },
          { selector: 'node.crowded', style: { label: '' } },
          { selector: 'node.crowded:active, node.crowded:selected', style: { label: 'data(label)' } },
          { selector: 'node[risk = 1]', style: { 'border-width': 4, 'border-color': '#b42318' } },
          {
            selector: 'edge',
            style: {
              width: 1.5,
              'line-color': '#b8c0cc',
              'target-arrow-color': '#b8c0cc',
              'target-arrow-shape': 'triangle',
              'curve-style': 'bezier',
            },
          },
        ],
      });
      cy.on('tap', 'node', (e) => ctx.go(`/graph${qs({ q, resource: e.target.id(), depth })}`));
      box.dataset.drawn = String(cy.nodes().length);
    });
  }
  if (risks.risks.length)
    el.append(
      card(
        'Known risks',
        h(
          'ul',
          { class: 'results' },
          risks.risks.slice(0, 8).map((r) => h('li', {}, pill(r.severity), ' ', r.title)),
        ),
      ),
    );
  return () => cy?.destroy();
};
