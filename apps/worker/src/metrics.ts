import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queue, Worker } from '@opsi/jobs';

/** Per-queue Prometheus metrics: job counts by state (read at scrape time) and job durations. */
export function createQueueMetrics(queues: Queue[], workers: Worker[], opts: { defaultMetrics: boolean }) {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'opsi_worker_' });
  new Gauge({
    name: 'opsi_queue_jobs',
    help: 'Jobs per queue and state (waiting, active, delayed, failed)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      for (const queue of queues) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        for (const [state, n] of Object.entries(counts)) this.set({ queue: queue.name, state }, n);
      }
    },
  });
  const duration = new Histogram({
    name: 'opsi_job_duration_seconds',
    help: 'Job processing time by queue, job and outcome',
    labelNames: ['queue', 'job', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
    registers: [registry],
  });
  for (const worker of workers) {
    const observe = (
      job: { name: string; processedOn?: number | undefined; finishedOn?: number | undefined } | undefined,
      outcome: string,
    ) => {
      if (job?.processedOn && job.finishedOn) {
        duration.observe(
          { queue: worker.name, job: job.name, outcome },
          (job.finishedOn - job.processedOn) / 1000,
        );
      }
    };
    worker.on('completed', (job) => observe(job, 'completed'));
    worker.on('failed', (job) => observe(job, 'failed'));
  }
  return registry;
}
