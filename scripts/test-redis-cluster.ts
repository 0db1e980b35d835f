// `npm run test:redis-cluster [vitest filters…]` (a step of `npm test`): the suites that lean on Redis
// hardest (agent runs and their streams, cancellation, triage, fair queuing, the agent budget and
// backpressure, incident timelines, the queue and stream-hub integration tests) against a real
// 3-master Redis Cluster, with every process of the service started with REDIS_CLUSTER=true and
// REDIS_URL at a seed node (spec/decisions.md, "Scale-out on real engines"). The cluster is started
// here from this machine's redis-server on free ports and stopped at the end; without redis-server
// the pass is skipped with a message.
import { spawn } from 'node:child_process';
import { redisClusterUnavailable, startRedisCluster } from '../test/support/redis-cluster';

/** What the pass runs when no files are given. */
const SUITES = [
  'packages/jobs/src/jobs.int.test.ts',
  'packages/jobs/src/fairness.int.test.ts',
  'packages/jobs/src/run-hub.int.test.ts',
  // Cancellation over pub/sub, the API's run streams and budget on a cluster.
  'packages/core/src/agent-sessions/runs.int.test.ts',
  'apps/api/src/runs.int.test.ts',
  'test/e2e/runs.e2e.test.ts',
  'test/e2e/blackbox-triage.e2e.test.ts',
  'test/e2e/triage-crash.e2e.test.ts',
  'test/e2e/fairness.e2e.test.ts',
  'test/e2e/blackbox-fairness.e2e.test.ts',
  // Incident timelines: the second stream hub.
  'test/e2e/incidents.e2e.test.ts',
];

const unavailable = redisClusterUnavailable();
if (unavailable) {
  console.error(`test:redis-cluster skipped: ${unavailable} (apt-get install redis-server)`);
  process.exit(0);
}

const cluster = await startRedisCluster({ masters: 3 });
console.error(`== Redis Cluster, 3 masters: ${cluster.urls.join(' ')} (seed ${cluster.url})`);
const args = process.argv.slice(2);
const vitest = spawn(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', ...(args.length ? args : SUITES)],
  { stdio: 'inherit', env: { ...process.env, REDIS_URL: cluster.url, REDIS_CLUSTER: 'true' } },
);
const stop = () => vitest.kill('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
const code = await new Promise<number>((resolve) => vitest.on('exit', (c) => resolve(c ?? 1)));
await cluster.stop();
process.exit(code);
