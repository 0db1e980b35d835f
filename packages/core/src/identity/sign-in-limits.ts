import { createHash } from 'node:crypto';
import type { RedisClient } from '@opsi/redis';
import { TooManyRequests } from '../errors';

// Counts a failed sign-in and, when the count reaches the limit within the window, locks the subject
// out: for the window, doubled for each lockout in the last day (capped at an hour). One script, so
// concurrent failures on several API processes count exactly once each. KEYS share one hash tag.
// KEYS: failures, lock, strikes. ARGV: window ms, limit, cap ms. Returns the lock's ms, or 0.
const FAIL_LUA = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n < tonumber(ARGV[2]) then return 0 end
local strikes = redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], 86400000)
local lock = math.min(tonumber(ARGV[1]) * 2 ^ (strikes - 1), tonumber(ARGV[3]))
redis.call('SET', KEYS[2], '1', 'PX', lock)
redis.call('DEL', KEYS[1])
return lock
`;

const LOCK_CAP_MS = 3_600_000;

type LimitRedis = RedisClient & {
  opsiSignInFailed(
    failures: string,
    lock: string,
    strikes: string,
    windowMs: number,
    limit: number,
    capMs: number,
  ): Promise<number>;
};

export interface SignInLimitSettings {
  LOGIN_MAX_FAILURES_PER_ACCOUNT: number;
  LOGIN_MAX_FAILURES_PER_ADDRESS: number;
  LOGIN_WINDOW_SECONDS: number;
}

/**
 * Failed-sign-in limits per account (the email asked for, known or not) and per client address,
 * kept in Redis so every API process shares them. Over a limit: 429 `{detail}` with Retry-After, before
 * any password is hashed.
 */
export class SignInLimits {
  private readonly redis: LimitRedis;

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    private readonly settings: SignInLimitSettings,
  ) {
    this.redis = redis as LimitRedis;
    if (typeof this.redis.opsiSignInFailed !== 'function')
      redis.defineCommand('opsiSignInFailed', { numberOfKeys: 3, lua: FAIL_LUA });
  }

  private subjects(email: string, address: string) {
    const account = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
    return [
      {
        base: `${this.prefix}:{signin:acct:${account}}`,
        limit: this.settings.LOGIN_MAX_FAILURES_PER_ACCOUNT,
        what: 'this account',
      },
      {
        base: `${this.prefix}:{signin:addr:${address}}`,
        limit: this.settings.LOGIN_MAX_FAILURES_PER_ADDRESS,
        what: 'this address',
      },
    ];
  }

  /** 429 when the account or the address is locked out. */
  async check(email: string, address: string): Promise<void> {
    for (const s of this.subjects(email, address)) {
      const ms = await this.redis.pttl(`${s.base}:lock`);
      if (ms > 0)
        throw new TooManyRequests(
          `Too many failed sign-ins for ${s.what}: try again in ${Math.ceil(ms / 1000)} s.`,
          ms / 1000,
        );
    }
  }

  /** Counts a failure for both; the one that reaches its limit is locked from now on. */
  async failed(email: string, address: string): Promise<void> {
    const windowMs = this.settings.LOGIN_WINDOW_SECONDS * 1000;
    for (const s of this.subjects(email, address))
      await this.redis.opsiSignInFailed(
        `${s.base}:fails`,
        `${s.base}:lock`,
        `${s.base}:strikes`,
        windowMs,
        s.limit,
        LOCK_CAP_MS,
      );
  }

  /** A right password clears the account's count (not its lockout history, nor the address's). */
  async succeeded(email: string, address: string): Promise<void> {
    await this.redis.del(`${this.subjects(email, address)[0]!.base}:fails`);
  }
}
