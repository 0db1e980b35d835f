import { hashTagOf, isClusterClient, type RedisClient } from '@opsi/redis';
import type { RunEvent } from '@opsi/contracts';
import type { Logger } from '@opsi/logger';
import { isTerminal, parseRunEntry, seqOfId, type StreamEntry } from './run-log';

/** A log of numbered events, one Redis stream per key: agent runs (RunEventLog) and incident timelines. */
export interface EventStreamLog {
  streamKey(id: string): string;
  read(id: string, afterSeq: number, count?: number): Promise<RunEvent[]>;
  last(id: string): Promise<RunEvent | undefined>;
}

export interface RunSubscription {
  /** Stops delivery; safe to call more than once. */
  close(): void;
}

export interface SubscribeOptions {
  /**
   * Receives events in order, each exactly once, the terminal event last. During the replay of stored
   * events a returned promise is awaited before the next batch (back-pressure: the log is the buffer);
   * live events arrive at the run's pace and are not held back for one slow listener.
   */
  onEvents(events: RunEvent[]): void | Promise<void>;
  /** Called once when the subscription ends because the run's terminal event was delivered. */
  onEnd?(): void;
  /**
   * Asked when the run's stream no longer holds what this subscriber has seen (it vanished or was
   * reset, as with a Redis restart without persistence): answers the run's terminal event if the run
   * ended meanwhile (Postgres keeps it), which is delivered and ends the subscription; undefined keeps
   * waiting for the events that continue the run.
   */
  onLost?(): Promise<RunEvent | undefined>;
  /**
   * The run was created by the caller just now and has at most its first few events: skip the replay
   * (XRANGE) and join the live read from seq 0 at once, which returns whatever is already there. One
   * round trip less on the way to a new stream's first event. Only with afterSeq 0.
   */
  fresh?: boolean;
}

interface Subscriber extends SubscribeOptions {
  runId: string;
  key: string;
  seq: number;
  closed: boolean;
  /** A lookup of a lost stream's run is under way. */
  asking?: boolean;
}

const REPLAY_BATCH = 1000;
const BLOCK_MS = 5000;
/** How often the watched streams are checked for having vanished or been reset. */
const LOST_CHECK_MS = 5000;
/** The wake stream's expiry (it outlives a process that dies) is renewed at most this often. */
const WAKE_EXPIRE_EVERY_MS = 60_000;

/**
 * One blocking read: the watched streams that share a slot, read by one `XREAD BLOCK` on a connection
 * of its own, with the wake stream of that slot. On a single Redis there is one group for every stream.
 */
interface ReadGroup {
  /** The streams' hash tag on a cluster ('' on a single Redis). */
  tag: string;
  keys: Set<string>;
  wakeKey: string;
  wakeCursor: string;
  looping: boolean;
  lastLostCheck: number;
}

/**
 * Streams run events to many listeners over blocking Redis connections.
 *
 * Written by hand because no library does this: a subscriber first replays what is stored after its
 * cursor (XRANGE, in large batches), then joins one `XREAD BLOCK` that covers every watched run, from
 * its own cursor. There is one cursor per subscriber and no pub/sub, so nothing falls between replay and
 * live delivery, and nothing is delivered twice. New subscribers wake the blocked read by appending to
 * a small wake stream that the read always includes, from the last wake id it saw, so a wake-up is
 * never missed.
 *
 * On a Redis Cluster a multi-key XREAD must stay within one slot (else CROSSSLOT), so the read is split
 * by the streams' hash tag (streamTag: at most STREAM_SHARDS of them): one read loop per tag, each on a
 * blocking connection of its own (the one given, then duplicates, kept for reuse) and with a wake stream
 * carrying the same tag. On a single Redis there is one loop over everything, as there always was.
 */
export class RunStreamHub {
  private readonly byKey = new Map<string, Set<Subscriber>>();
  private readonly groups = new Map<string, ReadGroup>();
  private readonly cluster: boolean;
  private readonly wakeBase: string;
  /** Blocking connections no loop is using now; the given one first. */
  private readonly idle: RedisClient[];
  /** The connections this hub opened itself (duplicates), closed by stop(). */
  private readonly opened: RedisClient[] = [];
  private stopped = false;
  /** When each read group's wake stream last had its expiry renewed. */
  private readonly wakeExpiredAt = new Map<string, number>();

  constructor(
    private readonly log: EventStreamLog,
    /** A dedicated connection with the blocking role: it spends its life inside XREAD BLOCK. */
    private readonly blocking: RedisClient,
    /** A command connection, for replays and wake-ups. */
    private readonly command: RedisClient,
    private readonly redisPrefix: string,
    private readonly logger?: Logger,
  ) {
    this.cluster = isClusterClient(blocking);
    this.idle = [blocking];
    this.wakeBase = `${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
  }

  /** Number of open subscriptions (for metrics and tests). */
  get size(): number {
    let n = 0;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  /** Replays the run's events after `afterSeq`, then delivers live ones until the terminal event. */
  async subscribe(runId: string, afterSeq: number, options: SubscribeOptions): Promise<RunSubscription> {
    const sub: Subscriber = {
      ...options,
      runId,
      key: this.log.streamKey(runId),
      seq: afterSeq,
      closed: false,
    };
    const subscription = { close: () => this.remove(sub) };
    if (options.fresh && afterSeq === 0) {
      this.watch(sub);
      await this.wakeSoon(sub.key);
      return subscription;
    }
    let replayed = false;
    for (;;) {
      const batch = await this.log.read(runId, sub.seq, REPLAY_BATCH);
      if (sub.closed) return subscription;
      if (batch.length === 0) break;
      replayed = true;
      const { ended, ready } = this.deliver(sub, batch);
      if (ended) return subscription;
      await ready;
      if (sub.closed) return subscription;
      if (batch.length < REPLAY_BATCH) break;
    }
    // Attached at or after the terminal event of a finished run: nothing more will come. Only a cursor
    // above 0 that the replay found nothing after can be there; otherwise the replay answered it (the
    // stream was empty, or its last event then was not terminal; anything after comes to the live read),
    // and a new run's stream, on the way to its first event, saves a round trip.
    if (!replayed && afterSeq > 0) {
      const last = await this.log.last(runId);
      if (sub.closed) return subscription;
      if (last && isTerminal(last) && last.seq <= sub.seq) {
        sub.closed = true;
        sub.onEnd?.();
        return subscription;
      }
    }
    this.watch(sub);
    await this.wakeSoon(sub.key);
    return subscription;
  }

  /**
   * Wakes the blocked read so it includes a new subscriber at once. If the wake-up cannot be written (Redis
   * at maxmemory refuses the XADD), the subscriber is not lost: the read includes it when its block ends
   * (BLOCK_MS); the run it follows is already queued, so failing the request here would only hide it.
   */
  private async wakeSoon(key: string) {
    await this.wake(this.groupOf(key)).catch((err) =>
      this.logger?.warn({ err }, 'run stream wake-up failed; the next read includes it'),
    );
  }

  /** The read group of a stream key (created on first use). */
  private groupOf(key: string): ReadGroup {
    const tag = this.cluster ? hashTagOf(key) : '';
    let group = this.groups.get(tag);
    if (!group) {
      group = {
        tag,
        keys: new Set(),
        // The wake stream carries the group's tag, so the read of the group's streams can include it.
        wakeKey: this.cluster
          ? `${this.redisPrefix}:hub-wake:{${tag}}:${this.wakeBase}`
          : `${this.redisPrefix}:hub-wake:${this.wakeBase}`,
        wakeCursor: '0-0',
        looping: false,
        lastLostCheck: Date.now(),
      };
      this.groups.set(tag, group);
    }
    return group;
  }

  /** Adds a subscriber to the live read. */
  private watch(sub: Subscriber) {
    let set = this.byKey.get(sub.key);
    if (!set) this.byKey.set(sub.key, (set = new Set()));
    set.add(sub);
    this.groupOf(sub.key).keys.add(sub.key);
  }

  /** Ends every subscription and the read loop. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.byKey.clear();
    await Promise.all(
      [...this.groups.values()].map((group) => {
        group.keys.clear();
        return this.wake(group).catch(() => undefined);
      }),
    );
    for (const connection of this.opened) connection.disconnect();
  }

  /** Delivers the events after the subscriber's cursor; `ended` when the run's terminal event was among them. */
  private deliver(sub: Subscriber, events: RunEvent[]): { ended: boolean; ready?: void | Promise<void> } {
    const fresh = events.filter((e) => e.seq > sub.seq);
    if (fresh.length === 0 || sub.closed) return { ended: false };
    sub.seq = fresh[fresh.length - 1]!.seq;
    const ready = sub.onEvents(fresh);
    if (fresh.some(isTerminal)) {
      this.remove(sub);
      sub.onEnd?.();
      return { ended: true };
    }
    return { ended: false, ready };
  }

  /**
   * Finds subscribers whose stream no longer holds what they have seen: the stream is gone, or its
   * last seq is below their cursor (a stream started again). Redis then lost events (a restart without
   * persistence); the run's terminal event may be among them, so Postgres is asked for it.
   */
  private async checkLost(group: ReadGroup) {
    const keys = [...group.keys];
    if (keys.length === 0) return;
    // One pipeline: a group's keys share a slot, as a cluster pipeline needs.
    const pipeline = this.command.pipeline();
    for (const key of keys) pipeline.xrevrange(key, '+', '-', 'COUNT', 1);
    const answers = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const [err, entries] = answers[i] ?? [];
      if (err) return;
      const lastSeq = (entries as StreamEntry[])[0] ? seqOfId((entries as StreamEntry[])[0]![0]) : 0;
      for (const sub of this.byKey.get(key) ?? []) {
        if (sub.seq > lastSeq && sub.onLost && !sub.asking) void this.askLost(sub);
      }
    });
  }

  private async askLost(sub: Subscriber) {
    sub.asking = true;
    try {
      const terminal = await sub.onLost!();
      if (!terminal || sub.closed) return;
      this.logger?.warn(
        { run_id: sub.runId, seen: sub.seq, terminal_seq: terminal.seq },
        'run stream lost; ending it with the terminal event kept in Postgres',
      );
      if (terminal.seq > sub.seq) {
        this.deliver(sub, [terminal]);
      } else {
        // Numbered by a writer that lost count: never send a seq the client already has. End the
        // stream; a re-attach is answered from Postgres.
        this.remove(sub);
        sub.onEnd?.();
      }
    } catch (err) {
      this.logger?.warn({ err, run_id: sub.runId }, 'lost run stream lookup failed');
    } finally {
      sub.asking = false;
    }
  }

  private remove(sub: Subscriber) {
    if (sub.closed) return;
    sub.closed = true;
    const set = this.byKey.get(sub.key);
    set?.delete(sub);
    if (set && set.size === 0) {
      this.byKey.delete(sub.key);
      this.groups.get(this.cluster ? hashTagOf(sub.key) : '')?.keys.delete(sub.key);
    }
  }

  private async wake(group: ReadGroup) {
    if (!group.looping && !this.stopped && group.keys.size > 0) {
      void this.loop(group);
      return;
    }
    if (group.looping) {
      // One XADD per new subscriber; the hour's expiry is renewed once a minute, not with every wake-up
      // (MULTI, XADD, EXPIRE, EXEC were four commands per fresh stream).
      if (Date.now() - (this.wakeExpiredAt.get(group.wakeKey) ?? 0) < WAKE_EXPIRE_EVERY_MS) {
        await this.command.xadd(group.wakeKey, 'MAXLEN', '~', '100', '*', 'w', '1');
        return;
      }
      await this.command
        .multi()
        .xadd(group.wakeKey, 'MAXLEN', '~', '100', '*', 'w', '1')
        .expire(group.wakeKey, 3600)
        .exec();
      this.wakeExpiredAt.set(group.wakeKey, Date.now());
    }
  }

  /** A blocking connection for a loop: an idle one, or a new duplicate of the given one. */
  private takeConnection(): RedisClient {
    const idle = this.idle.pop();
    if (idle) return idle;
    const connection = this.blocking.duplicate();
    connection.on('error', (err) => this.logger?.warn({ err }, 'run stream connection error'));
    this.opened.push(connection);
    return connection;
  }

  private async loop(group: ReadGroup) {
    group.looping = true;
    const connection = this.takeConnection();
    try {
      while (!this.stopped && group.keys.size > 0) {
        const keys: string[] = [];
        const ids: string[] = [];
        for (const key of group.keys) {
          let min = Infinity;
          for (const s of this.byKey.get(key) ?? []) min = Math.min(min, s.seq);
          if (min === Infinity) continue;
          keys.push(key);
          ids.push(`${min}-0`);
        }
        let result: Array<[string, StreamEntry[]]> | null;
        try {
          result = (await connection.xread(
            'COUNT',
            500,
            'BLOCK',
            BLOCK_MS,
            'STREAMS',
            ...keys,
            group.wakeKey,
            ...ids,
            group.wakeCursor,
          )) as Array<[string, StreamEntry[]]> | null;
        } catch (err) {
          if (this.stopped) break;
          this.logger?.warn({ err }, 'run stream read failed; retrying');
          await new Promise((r) => setTimeout(r, 500));
          continue;
        }
        if (result === null || Date.now() - group.lastLostCheck >= LOST_CHECK_MS) {
          group.lastLostCheck = Date.now();
          await this.checkLost(group).catch((err) => this.logger?.warn({ err }, 'run stream check failed'));
        }
        for (const [key, entries] of result ?? []) {
          if (key === group.wakeKey) {
            group.wakeCursor = entries[entries.length - 1]![0];
            continue;
          }
          const subs = this.byKey.get(key);
          if (!subs) continue;
          const runId = [...subs][0]!.runId;
          const events = entries.map((e) => parseRunEntry(runId, e));
          for (const sub of [...subs]) this.deliver(sub, events);
        }
      }
    } finally {
      group.looping = false;
      if (!this.stopped) this.idle.push(connection);
    }
    // A subscriber may have arrived while the loop was finishing.
    if (!this.stopped && group.keys.size > 0) void this.loop(group);
  }
}

export { seqOfId };
