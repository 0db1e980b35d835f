import type { RedisClient } from '@opsi/redis';

// Check and count in one atomic step, so N racing requests for the last N units admit exactly N.
const SPEND_LUA = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return -1 end
used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2])) end
return used
`;
const REFUND_BODY = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`;
// A refund must work when Redis is at maxmemory (noeviction): that is exactly when a request that spent
// a unit is refused with 503, and a refund refused too would keep the unit spent. Redis 7's `allow-oom`
// script flag lets this one DECR of an existing key through. Servers without script flags (Redis 6.2, the
// embedded js-redis-server) refuse the shebang line; the plain script is used there.
const REFUND_LUA_ALLOW_OOM = `#!lua flags=allow-oom${REFUND_BODY}`;

type BudgetRedis = RedisClient & {
  opsiSpendBudget(key: string, limit: number, ttl: number): Promise<number>;
  opsiRefundBudget(key: string): Promise<number>;
  opsiRefundBudgetAllowOom(key: string): Promise<number>;
};

/** Seconds from `now` until the next 00:00 UTC (at least 1). */
export function secondsUntilUtcMidnight(now: Date): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

export type BudgetDecision = { ok: true; used: number } | { ok: false; retryAfterSeconds: number };

/** Per connection: whether the server runs scripts with flags (known after the first refund). */
const scriptFlags = new WeakMap<RedisClient, boolean>();

/** The daily agent budget: units per token per UTC day, counted in Redis. */
export class AgentBudget {
  private readonly redis: BudgetRedis;

  constructor(
    redis: RedisClient,
    private readonly redisPrefix: string,
  ) {
    this.redis = redis as BudgetRedis;
    if (typeof this.redis.opsiSpendBudget !== 'function') {
      redis.defineCommand('opsiSpendBudget', { numberOfKeys: 1, lua: SPEND_LUA });
      redis.defineCommand('opsiRefundBudget', { numberOfKeys: 1, lua: REFUND_BODY });
      redis.defineCommand('opsiRefundBudgetAllowOom', { numberOfKeys: 1, lua: REFUND_LUA_ALLOW_OOM });
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
    const key = this.key(tokenId, now);
    if (scriptFlags.get(this.redis) !== false) {
      try {
        await this.redis.opsiRefundBudgetAllowOom(key);
        scriptFlags.set(this.redis, true);
        return;
      } catch (err) {
        // Only a server that cannot read the shebang line falls back; any other error is the refund's.
        if (scriptFlags.get(this.redis) === true || !/unexpected symbol|shebang|flags/i.test(String(err)))
          throw err;
        scriptFlags.set(this.redis, false);
      }
    }
    await this.redis.opsiRefundBudget(key);
  }

  /** Units used today by a token. */
  async used(tokenId: string, now = new Date()): Promise<number> {
    return Number((await this.redis.get(this.key(tokenId, now))) ?? 0);
  }
}
