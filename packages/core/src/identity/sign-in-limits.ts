import { createHash } from 'node:crypto';
import type { RedisClient } from '@opsi/redis';
import { TooManyRequests } from '../errors';

// Starts a sign-in attempt: refused while the subject is locked out, or while its failures in the
// window plus the attempts still being checked reach the limit (a burst of guesses sent together would
// otherwise all pass before the first failure is counted); else the attempt is counted as in flight.
// KEYS: failures, lock, in flight. ARGV: limit, in-flight ttl ms.
// Returns {0, 0} when counted, {1, ms} when locked out, {2, ms} when at the limit with attempts in flight.
const ATTEMPT_LUA = `
local lock = redis.call('PTTL', KEYS[2])
if lock > 0 then return {1, lock} end
local n = tonumber(redis.call('GET', KEYS[1]) or '0') + tonumber(redis.call('GET', KEYS[3]) or '0')
if n >= tonumber(ARGV[1]) then return {2, redis.call('PTTL', KEYS[1])} end
redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return {0, 0}
`;

// Ends an attempt that was not a guess (the password was never checked: 503, an error).
// KEYS: in flight.
const RELEASE_LUA = `
local n = redis.call('DECR', KEYS[1])
if n <= 0 then redis.call('DEL', KEYS[1]) end
return n
`;

// Counts a failed sign-in and, when the count reaches the limit within the window, locks the subject
// out: for the window, doubled for each lockout in the last day (capped at an hour). One script, so
// concurrent failures on several API processes count exactly once each. The attempt is no longer in
// flight. KEYS share one hash tag.
// KEYS: failures, lock, strikes, in flight. ARGV: window ms, limit, cap ms. Returns the lock's ms, or 0.
const FAIL_LUA = `
if redis.call('DECR', KEYS[4]) <= 0 then redis.call('DEL', KEYS[4]) end
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

/**
 * How long an attempt counts as in flight at most: past PASSWORD_HASH_WAIT_MS (at most a minute) and
 * the check itself. Only a process that died mid-attempt leaves one behind, and it lapses then.
 */
const IN_FLIGHT_TTL_MS = 120_000;

type LimitRedis = RedisClient & {
  opsiSignInAttempt(
    failures: string,
    lock: string,
    inFlight: string,
    limit: number,
    ttlMs: number,
  ): Promise<[number, number]>;
  opsiSignInRelease(inFlight: string): Promise<number>;
  opsiSignInFailed(
    failures: string,
    lock: string,
    strikes: string,
    inFlight: string,
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
    if (typeof this.redis.opsiSignInAttempt !== 'function') {
      redis.defineCommand('opsiSignInAttempt', { numberOfKeys: 3, lua: ATTEMPT_LUA });
      redis.defineCommand('opsiSignInRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
      redis.defineCommand('opsiSignInFailed', { numberOfKeys: 4, lua: FAIL_LUA });
    }
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

  /**
   * Starts a sign-in: 429 when the account or the address is locked out, or when its failures in the
   * window and the attempts in flight already reach its limit; else the attempt counts as in flight
   * until `failed`, `succeeded` or `abandoned` ends it. So the 21st guess is refused however the
   * guesses are sent, one by one or all at once.
   */
  async attempt(email: string, address: string): Promise<void> {
    const started: string[] = [];
    for (const s of this.subjects(email, address)) {
      const [refused, ms] = await this.redis.opsiSignInAttempt(
        `${s.base}:fails`,
        `${s.base}:lock`,
        `${s.base}:inflight`,
        s.limit,
        IN_FLIGHT_TTL_MS,
      );
      if (refused) {
        for (const base of started) await this.redis.opsiSignInRelease(`${base}:inflight`);
        // At the limit with attempts in flight: those decide; retry when they are answered, at the
        // latest when the window's count lapses.
        const seconds = refused === 1 ? ms / 1000 : Math.max(1, ms / 1000);
        throw new TooManyRequests(
          refused === 1
            ? `Too many failed sign-ins for ${s.what}: try again in ${Math.ceil(seconds)} s.`
            : `Too many sign-ins for ${s.what} at once: try again in ${Math.ceil(seconds)} s.`,
          seconds,
        );
      }
      started.push(s.base);
    }
  }

  /** Ends an attempt whose password was not checked (no hashing slot, an error): not a failure. */
  async abandoned(email: string, address: string): Promise<void> {
    for (const s of this.subjects(email, address)) await this.redis.opsiSignInRelease(`${s.base}:inflight`);
  }

  /** 429 when the account or the address is locked out (reads only; `attempt` starts a sign-in). */
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

  /**
   * Counts a failure for both and ends the attempt; the one that reaches its limit is locked from now
   * on.
   */
  async failed(email: string, address: string): Promise<void> {
    const windowMs = this.settings.LOGIN_WINDOW_SECONDS * 1000;
    for (const s of this.subjects(email, address))
      await this.redis.opsiSignInFailed(
        `${s.base}:fails`,
        `${s.base}:lock`,
        `${s.base}:strikes`,
        `${s.base}:inflight`,
        windowMs,
        s.limit,
        LOCK_CAP_MS,
      );
  }

  /**
   * A right password ends the attempt and clears the account's count (not its lockout history, nor
   * the address's count).
   */
  async succeeded(email: string, address: string): Promise<void> {
    await this.abandoned(email, address);
    await this.redis.del(`${this.subjects(email, address)[0]!.base}:fails`);
  }
}
