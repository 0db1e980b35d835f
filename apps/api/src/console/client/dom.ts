/// <reference lib="dom" />
// A tiny element builder: no framework, no inline script or style (the Content-Security-Policy forbids them).

export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** h('button', {class: 'x', onclick: f}, 'Label'): attributes, listeners (on…) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' && 'value' in el) (el as HTMLInputElement).value = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

export const money = (n: number) =>
  '$' + n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export const when = (iso: string | null | undefined) =>
  iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—';

export const pill = (text: string, kind = text) => h('span', { class: `pill ${kind}` }, text);

/** A panel with a heading. */
export const card = (title: string | null, ...children: Child[]) =>
  h('section', { class: 'card' }, title ? h('h2', {}, title) : null, ...children);

/** An empty state that says what to do. */
export const empty = (text: string, ...more: Child[]) =>
  h('div', { class: 'empty' }, h('p', {}, text), ...more);

/** A copyable command. */
export function command(text: string, note?: string): HTMLElement {
  const status = h('span', { class: 'copied', role: 'status' });
  return h(
    'div',
    { class: 'command' },
    h('code', {}, text),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary small',
        'aria-label': `Copy: ${text}`,
        onclick: () => {
          void navigator.clipboard?.writeText(text).then(
            () => (status.textContent = 'Copied'),
            () => (status.textContent = 'Select and copy the text'),
          );
        },
      },
      'Copy',
    ),
    status,
    note ? h('span', { class: 'note' }, note) : null,
  );
}
