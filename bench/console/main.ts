/// <reference lib="dom" />
// First load of the console's overview over loopback with a cold browser cache, beside the raw cost
// underneath it: the same bytes and API calls fetched by Node without a page. `npm run bench:console`;
// docs/performance.md records the numbers. Target: first load <= 1 s.
//
// One API (in-process, production mode: the console bundle minified and cached, responses not
// re-validated) on a scratch database with the demo environment connected and scanned, and Debian's
// headless Chromium. Each browser run is a new context (empty cache, no open connection) holding only
// the session cookie; it is timed from navigation to the overview drawn (figures, bars and the chart's
// canvas). Each raw run fetches the page, then its stylesheets and script files, then the overview's
// three API calls, in the same order and with the same parallelism as the page, on fresh connections.
// Sides alternate run by run so a noisy neighbour hurts both alike. Options: --runs=15.
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { connectEnvironment, requestScan, runScan } from '@opsi/core';
import { createTenantWithUser, createTestContext, loginOverHttp, startTestApi } from '@opsi/test-support';
import { launchChromium } from '@opsi/test-support/chromium';
import { median, percentile } from '../runs/lib/stats';

const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.split('=')[1] ?? 15);
const API_CALLS = [
  '/console/api/pulse/overview',
  '/console/api/pulse/findings?sort_by=savings',
  '/console/api/pulse/resolved',
];

// Production serves the bundle `npm run build` wrote: build it first (a no-op when fresh).
const built = spawnSync(process.execPath, ['scripts/build.mjs'], {
  cwd: fileURLToPath(new URL('../../', import.meta.url)),
  stdio: 'inherit',
});
if (built.status !== 0) throw new Error('npm run build failed');
const t = await createTestContext({
  NODE_ENV: 'production',
  SECRETS_KEY: 'bench-only-secrets-key-0123456789abcdef',
});
const member = await createTenantWithUser(t);
await connectEnvironment(t.db, member.tenant.id, {
  kind: 'demo',
  seed: 42,
  size: 'small',
  epoch: '2026-11-01',
});
await runScan(t.db, (await requestScan(t.db, null, member.tenant.id, 'bench')).id);
const api = await startTestApi(t);
const browser = await launchChromium();
try {
  const base = api.url;
  const login = await loginOverHttp(base, member.user.email, member.password);
  const [name, value] = login.cookie.split('=') as [string, string];

  // The page's files, as the browser asks for them: found in the page and in the entry script's imports.
  const shell = await (await fetch(`${base}/`, { headers: { cookie: login.cookie } })).text();
  const styles = [...shell.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
  const entry = /<script type="module" src="([^"]+)"/.exec(shell)![1]!;
  const entryJs = await (await fetch(`${base}${entry}`)).text();
  const imports = [
    ...new Set(
      [...entryJs.matchAll(/from"\.\/(chunk-[A-Z0-9]+\.js)"/g)].map((m) => `/assets/console/${m[1]}`),
    ),
  ];

  interface Breakdown {
    html: number;
    domReady: number;
    apiDone: number;
  }
  const breakdowns: Breakdown[] = [];

  async function browserRun(): Promise<{ ms: number; bytes: number }> {
    const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
    await context.addCookies([{ name, value, url: base }]);
    const page = await context.newPage();
    let bytes = 0;
    page.on(
      'response',
      (r) =>
        void r.body().then(
          (b) => (bytes += b.length),
          () => undefined,
        ),
    );
    const started = performance.now();
    await page.goto(`${base}/`);
    await page.locator('#page[data-route="/overview"] .chart canvas').waitFor();
    const ms = performance.now() - started;
    // Where the time went, by the page's own clock (ms after navigation start).
    breakdowns.push(
      await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        const api = performance
          .getEntriesByType('resource')
          .filter((e) => e.name.includes('/console/api/'))
          .map((e) => (e as PerformanceResourceTiming).responseEnd);
        return {
          html: nav.responseEnd,
          domReady: nav.domContentLoadedEventEnd,
          apiDone: Math.max(0, ...api),
        };
      }),
    );
    await context.close();
    return { ms, bytes };
  }

  async function rawRun(): Promise<{ ms: number; bytes: number }> {
    // A new connection per request: nothing kept alive from the run before, as for a new browser context.
    const get = (path: string, cookie = false) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          `${base}${path}`,
          { agent: false, headers: cookie ? { cookie: login.cookie } : {} },
          (res) => {
            let n = 0;
            res.on('data', (d: Buffer) => (n += d.length));
            res.on('end', () => resolve(n));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });
    const started = performance.now();
    let bytes = await get('/', true);
    const assets = await Promise.all([...styles, entry].map((p) => get(p)));
    const chunks = await Promise.all(imports.map((p) => get(p)));
    const calls = await Promise.all(API_CALLS.map((p) => get(p, true)));
    bytes += [...assets, ...chunks, ...calls].reduce((a, b) => a + b, 0);
    const ms = performance.now() - started;
    return { ms, bytes };
  }

  await browserRun(); // the service's own first answers (JIT, pools), not the browser's cache
  await rawRun();
  breakdowns.length = 0;
  const results = { browser: [] as number[], raw: [] as number[] };
  let browserBytes = 0;
  let rawBytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const b = await browserRun();
    const r = await rawRun();
    results.browser.push(b.ms);
    results.raw.push(r.ms);
    browserBytes = b.bytes;
    rawBytes = r.bytes;
  }
  const row = (label: string, xs: number[]) =>
    `${label.padEnd(44)} median ${median(xs).toFixed(0).padStart(5)} ms   p90 ${percentile(xs, 90).toFixed(0).padStart(5)} ms`;
  console.warn(
    `console first load, ${RUNS} runs per side, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.warn(row('overview in Chromium, cold cache (ours)', results.browser));
  console.warn(row('same bytes + API calls by Node (raw)', results.raw));
  const part = (k: keyof Breakdown) => median(breakdowns.map((b) => b[k])).toFixed(0);
  console.warn(
    `in the page (median ms after navigation start): HTML received ${part('html')}, DOMContentLoaded (scripts run) ${part('domReady')}, last API answer ${part('apiDone')}; the rest is drawing`,
  );
  console.warn(`ratio (median): ${(median(results.browser) / median(results.raw)).toFixed(1)}x`);
  console.warn(
    `bytes: page ${(browserBytes / 1024).toFixed(0)} KiB as received by the browser, raw ${(rawBytes / 1024).toFixed(0)} KiB; files: ${[...styles, entry, ...imports].join(', ')}`,
  );
  const p90 = percentile(results.browser, 90);
  console.warn(`target: first load <= 1000 ms: ${p90 <= 1000 ? 'met' : 'MISSED'} (p90 ${p90.toFixed(0)} ms)`);
} finally {
  await browser.close();
  await api.close();
  await t.close();
}
