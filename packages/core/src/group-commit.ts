/**
 * Group commit (Nagle-style micro-batching) per key: requests that arrive while a batch of the same key
 * is in flight, or in the same turn of the event loop, are coalesced into one batch, and `run` is called
 * once for the whole batch. There is no fixed delay: an idle key flushes its first request on the next
 * turn of the event loop (`setImmediate`), so a lone request pays nothing; under load, requests pile up
 * while up to `maxInFlight` batches of their key run, and go together when one finishes.
 *
 * `run` gets the requests' items in order (one array per request) and answers one result per request,
 * in the same order. If it throws, every request of that batch gets the error. It may call `release()`
 * to give its in-flight slot back before it ends (a batch that only waits no longer holds others back).
 */
export interface GroupCommitOptions {
  /** Most items in one batch (a single request larger than this still goes, alone). */
  maxItems: number;
  /** Most batches of one key running at once. */
  maxInFlight: number;
}

interface Waiting<T, R> {
  items: T[];
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

interface KeyState<T, R> {
  queue: Array<Waiting<T, R>>;
  inFlight: number;
  scheduled: boolean;
}

export class GroupCommit<T, R> {
  private readonly keys = new Map<string, KeyState<T, R>>();
  /** Batches flushed so far (for tests and metrics). */
  batches = 0;

  constructor(
    private readonly run: (key: string, requests: T[][], release: () => void) => Promise<R[]>,
    private readonly options: GroupCommitOptions,
  ) {
    if (options.maxItems < 1 || options.maxInFlight < 1) throw new Error('group commit: limits must be >= 1');
  }

  submit(key: string, items: T[]): Promise<R> {
    let state = this.keys.get(key);
    if (!state) {
      state = { queue: [], inFlight: 0, scheduled: false };
      this.keys.set(key, state);
    }
    const s = state;
    const promise = new Promise<R>((resolve, reject) => s.queue.push({ items, resolve, reject }));
    this.schedule(key, s);
    return promise;
  }

  private schedule(key: string, s: KeyState<T, R>) {
    if (s.scheduled || !s.queue.length || s.inFlight >= this.options.maxInFlight) return;
    s.scheduled = true;
    setImmediate(() => {
      s.scheduled = false;
      this.flush(key, s);
    });
  }

  private flush(key: string, s: KeyState<T, R>) {
    if (!s.queue.length || s.inFlight >= this.options.maxInFlight) return;
    const batch: Array<Waiting<T, R>> = [];
    let size = 0;
    while (s.queue.length) {
      const next = s.queue[0]!;
      if (batch.length && size + next.items.length > this.options.maxItems) break;
      batch.push(s.queue.shift()!);
      size += next.items.length;
    }
    s.inFlight++;
    this.batches++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      s.inFlight--;
      if (!s.queue.length && !s.inFlight && !s.scheduled) this.keys.delete(key);
      else this.schedule(key, s);
    };
    void (async () => {
      try {
        const results = await this.run(
          key,
          batch.map((w) => w.items),
          release,
        );
        if (results.length !== batch.length) throw new Error('group commit: one result per request expected');
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (e) {
        for (const w of batch) w.reject(e);
      } finally {
        release();
      }
    })();
    // More waiting than one batch holds, and room for another batch: it goes too.
    this.schedule(key, s);
  }
}
