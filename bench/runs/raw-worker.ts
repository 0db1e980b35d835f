// Baseline (a), worker side: a bare BullMQ Worker whose processor XADDs one entry to the stream the job
// names. Started as its own process, like the product's worker, by main.ts.
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const url = process.env.BENCH_REDIS_URL!;
const prefix = process.env.BENCH_BULL_PREFIX!;
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);

const command = new Redis(url);
const worker = new Worker(
  'latency',
  async (job) => {
    const { key } = job.data as { key: string };
    await command.xadd(key, '*', 'k', 'message.delta', 'd', '{"text":"echo: hi"}');
  },
  { connection: new Redis(url, { maxRetriesPerRequest: null }), prefix, concurrency },
);
await worker.waitUntilReady();
process.send?.({ type: 'ready' });

process.once('SIGTERM', async () => {
  await worker.close();
  command.disconnect();
  process.exit(0);
});
