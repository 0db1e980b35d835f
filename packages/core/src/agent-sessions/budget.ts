import type { Redis } from 'ioredis';

// Check and count in one atomic step, so N racing requests for the last N units admit exactly N.
const SPEND_LUA = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return -1 end
used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2])) end
return used
`;
const REFUND_LUA = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`;

type BudgetRedis = Redis & {
  opsiSpendBudget(key: string, limit: number, ttl: number): Promise<number>;
  opsiRefundBudget(key: string): Promise<number>;
};

/** Seconds from `now` until the next 00:00 UTC (at least 1). */
export function secondsUntilUtcMidnight(now: Date): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

export type BudgetDecision = { ok: true; used: number } | { ok: false; retryAfterSeconds: number };

/** The daily agent budget: units per token per UTC day, counted in Redis. */
export class AgentBudget {
  private readonly redis: BudgetRedis;

  constructor(
    redis: Redis,
    private readonly redisPrefix: string,
  ) {
    this.redis = redis as BudgetRedis;
    if (typeof this.redis.opsiSpendBudget !== 'function') {
      redis.defineCommand('opsiSpendBudget', { numberOfKeys: 1, lua: SPEND_LUA });
      redis.defineCommand('opsiRefundBudget', { numberOfKeys: 1, lua: REFUND_LUA });
    }
  }

  private key(tokenId: string, now: Date): string {
    return `${this.redisPrefix}:budget:${tokenId}:${now.toISOString().slice(0, 10)}`;
  }

  /** Spends one unit if any is left today. */
  async spend(tokenId: string, dailyLimit: number, now = new Date()): Promise<BudgetDecision> {
    const untilMidnight = secondsUntilUtcMidnight(now);
    const used = await this.redis.opsiSpendBudget(this.key(tokenId, now), dailyLimit, untilMidnight + 3600);
    return used < 0 ? { ok: false, retryAfterSeconds: untilMidnight } : { ok: true, used };
  }

  /** Gives back a unit spent by a request that then failed before its run was queued. */
  async refund(tokenId: string, now = new Date()): Promise<void> {
    await this.redis.opsiRefundBudget(this.key(tokenId, now));
  }

  /** Units used today by a token. */
  async used(tokenId: string, now = new Date()): Promise<number> {
    return Number((await this.redis.get(this.key(tokenId, now))) ?? 0);
  }
}
