import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineRoute, reply } from '../http/route';
import { html } from '../pages/html';

// GET /docs: the API reference, the served OpenAPI document rendered by Swagger UI from the
// swagger-ui-dist package, served by the API itself (no CDN), under the pages' Content-Security-Policy.

const require = createRequire(import.meta.url);
const DIST = dirname(require.resolve('swagger-ui-dist/package.json'));
export const SWAGGER_UI_VERSION: string = require('swagger-ui-dist/package.json').version;

const DOCS_JS = `
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    filter: true,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  });
});
`;

const DOCS_CSS = `
body { margin: 0; background: #fff; }
.docs-bar { display: flex; gap: 16px; align-items: baseline; padding: 12px 24px; border-bottom: 1px solid #dfe3ea; font: 15px/1.5 system-ui, sans-serif; }
.docs-bar a { color: #2456d8; text-decoration: none; }
.docs-bar .brand { font-weight: 700; font-size: 18px; color: #1d2330; }
`;

/** Files read once, on first request: the viewer is 1.7 MB and most API processes never serve it. */
const files = new Map<string, Buffer>();
function distFile(name: string): Buffer {
  let body = files.get(name);
  if (!body) {
    body = readFileSync(join(DIST, name));
    files.set(name, body);
  }
  return body;
}

function docsPage(): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>API reference · opsi</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
        <link rel="stylesheet" href="/docs/assets/docs.css" />
        <script src="/docs/assets/swagger-ui-bundle.js" defer></script>
        <script src="/docs/assets/docs.js" defer></script>
      </head>
      <body>
        <header class="docs-bar">
          <a class="brand" href="/">opsi</a>
          <span>API reference (v1)</span>
          <a href="/api/v1/openapi.json">openapi.json</a>
          <a href="/settings/tokens">API tokens</a>
        </header>
        <div id="swagger-ui"></div>
      </body>
    </html>`.value;
}

const ASSETS: Record<string, { type: string; body: () => Buffer | string }> = {
  'swagger-ui-bundle.js': {
    type: 'text/javascript; charset=utf-8',
    body: () => distFile('swagger-ui-bundle.js'),
  },
  'swagger-ui.css': { type: 'text/css; charset=utf-8', body: () => distFile('swagger-ui.css') },
  'docs.js': { type: 'text/javascript; charset=utf-8', body: () => DOCS_JS },
  'docs.css': { type: 'text/css; charset=utf-8', body: () => DOCS_CSS },
};

export const getDocsPage = defineRoute({
  method: 'GET',
  path: '/docs',
  auth: 'none',
  internal: true,
  summary: 'API reference page (Swagger UI over /api/v1/openapi.json)',
  responses: { 200: { html: true } },
  handler: () =>
    reply(200, docsPage(), { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' }),
});

export const docsAssetRoutes = Object.entries(ASSETS).map(([name, asset]) =>
  defineRoute({
    method: 'GET',
    path: `/docs/assets/${name}`,
    auth: 'none',
    internal: true,
    summary: `API reference asset ${name}`,
    handler: () =>
      reply(200, asset.body(), {
        'Content-Type': asset.type,
        'Cache-Control': `public, max-age=3600`,
        ETag: `"swagger-ui-${SWAGGER_UI_VERSION}-${name}"`,
      }),
  }),
);

export const docsRoutes = [getDocsPage, ...docsAssetRoutes];
