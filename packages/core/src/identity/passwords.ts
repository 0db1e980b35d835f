import argon2 from 'argon2';
import { ServiceUnavailable } from '../errors';

// OWASP's argon2id baseline (19 MiB, 2 passes, 1 lane): strong, and fast enough for a login path.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most `concurrency` argon2 computations at once in this process; a caller beyond that waits up to
 * `waitMs` for a slot, then gets 503 with Retry-After instead of joining a queue that grows without
 * bound (each hash holds 19 MiB and a libuv thread). Written here because p-limit, the limiter in the
 * tree, queues without a bound or a timeout.
 */
class HashGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    public concurrency: number,
    public waitMs: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await this.acquire();
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Waits for a slot handed over by a finishing computation (active stays counted). */
  private acquire(): Promise<void> {
    return new Promise((resolve, reject) => {
      const take = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(new ServiceUnavailable('Too many sign-ins at once: try again shortly.', 1));
      }, this.waitMs);
      this.waiting.push(take);
    });
  }

  /** Computations running now and callers waiting (for tests and metrics). */
  load() {
    return { active: this.active, waiting: this.waiting.length };
  }
}

const gate = new HashGate(4, 2_000);

/** PASSWORD_HASH_CONCURRENCY and PASSWORD_HASH_WAIT_MS, set once at start. */
export function setPasswordHashLimits(concurrency: number, waitMs: number): void {
  gate.concurrency = concurrency;
  gate.waitMs = waitMs;
}

export function passwordHashLoad() {
  return gate.load();
}

/** An argon2id hash in PHC string form. */
export function hashPassword(password: string): Promise<string> {
  return gate.run(() => argon2.hash(password, OPTIONS));
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks a password; with no stored hash it still does the same work, so an unknown email and a wrong
 * password take the same time and get the same answer.
 */
export async function verifyPassword(hash: string | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= argon2.hash('opsi-dummy-password', OPTIONS);
    const dummy = await dummyHash;
    await gate.run(() => argon2.verify(dummy, password).catch(() => false));
    return false;
  }
  return gate.run(() => argon2.verify(hash, password).catch(() => false));
}
