const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A value already escaped or built from escaped parts. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

/** Tagged template that escapes every interpolation unless it is Html (or an array of Html). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    const part = Array.isArray(v)
      ? v.map((x) => (x instanceof Html ? x.value : esc(x))).join('')
      : v instanceof Html
        ? v.value
        : esc(v);
    out += part + strings[i + 1]!;
  });
  return new Html(out);
}

export interface LayoutOptions {
  title: string;
  user?: { email: string; tenant: string } | undefined;
  csrf?: string | undefined;
  scripts?: string[];
  /** ES module scripts (the console bundle). */
  modules?: string[];
  /** Stylesheets besides app.css. */
  styles?: string[];
  /** A page that uses the full width of the screen (the console) instead of a reading column. */
  wide?: boolean;
  body: Html;
}

/**
 * The page frame every server-rendered page shares. The empty `data:` icon keeps browsers from asking
 * for /favicon.ico, which the service does not serve (a 404 and a console error on every page).
 */
export function layout(o: LayoutOptions): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${o.csrf ? html`<meta name="csrf-token" content="${o.csrf}" />` : ''}
        <title>${o.title} · opsi</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/assets/app.css" />
        ${(o.styles ?? []).map((s) => html`<link rel="stylesheet" href="${s}" />`)}
        ${(o.scripts ?? []).map((s) => html`<script src="${s}" defer></script>`)}
        ${(o.modules ?? []).map((s) => html`<script type="module" src="${s}"></script>`)}
      </head>
      <body>
        <header class="bar">
          <a class="brand" href="/">opsi</a>
          ${
            o.user
              ? html`<nav>
                  <span class="who">${o.user.email} · ${o.user.tenant}</span>
                  <a href="/">Console</a>
                  <a href="/settings/tokens">API tokens</a>
                  <button type="button" id="logout" class="link">Sign out</button>
                </nav>`
              : ''
          }
        </header>
        <main class="${o.wide ? 'wide' : ''}">${o.body}</main>
      </body>
    </html>`.value;
}
