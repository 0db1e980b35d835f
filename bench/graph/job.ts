// The resilience job alone in a fresh process, as a worker would run it after a scan: its wall time and
// the process's peak resident set (maxRSS). Run by bench/graph/main.ts: `tsx bench/graph/job.ts <db url> <tenant id>`.
import { runResilience } from '@opsi/core';
import { createPostgresDatabase } from '@opsi/db';

const [url, tenantId] = process.argv.slice(2);
const handle = createPostgresDatabase(url!, { max: 2, applicationName: 'opsi-bench-graph-job' });
const baseline = process.resourceUsage().maxRSS * 1024;
const started = performance.now();
const run = await runResilience(handle.db, tenantId!);
const ms = performance.now() - started;
await handle.close();
process.stdout.write(
  JSON.stringify({
    ms,
    peak_rss: process.resourceUsage().maxRSS * 1024,
    baseline_rss: baseline,
    findings: run.findings,
    risks: run.risks,
    stats: run.stats,
  }),
);
