import type { AgentEngine } from '@opsi/agent';
import type { Config } from '@opsi/config';
import type { Db } from '@opsi/db';
import type { QueueHandlers, RunEventLog, TimelineLog } from '@opsi/jobs';
import type { RedisClient } from '@opsi/redis';
import { executeRun } from './runs';

export interface AgentJobsDeps {
  db: Db;
  /** The command connection (cancel keys, the run hub's wake-ups). */
  command: RedisClient;
  log: RunEventLog;
  timeline: TimelineLog;
  engine: AgentEngine;
  config: Pick<Config, 'REDIS_PREFIX' | 'AGENT_TURN_TIMEOUT_MS'>;
}

/** The agent queue's handler: one turn of a run. */
export function agentJobs(d: AgentJobsDeps): { agent: QueueHandlers<'agent'> } {
  const deps = {
    db: d.db,
    redis: d.command,
    log: d.log,
    engine: d.engine,
    redisPrefix: d.config.REDIS_PREFIX,
    turnTimeoutMs: d.config.AGENT_TURN_TIMEOUT_MS,
    timeline: d.timeline,
  };
  return {
    agent: {
      turn: (payload, ctx) =>
        executeRun(deps, payload.run_id, {
          attempt: ctx.job.attemptsStarted,
          signal: ctx.signal,
          log: ctx.log,
        }),
    },
  };
}
