import { streamTag, type RedisClient } from '@opsi/redis';
import type { RunEvent } from '@opsi/contracts';
import { parseRunEntry, type StreamEntry } from './run-log';

/** An incident timeline event as it goes on the wire. */
export interface TimelineEntry {
  id: number;
  incident_id: string;
  kind: string;
  body: string;
  actor: string;
  created_at: string;
  [field: string]: unknown;
}

/**
 * The live side of incident timelines: one Redis stream per incident whose entry ids are the timeline
 * event ids (`<id>-0`), so the run stream hub serves it unchanged (replay after a cursor, then one
 * multiplexed XREAD BLOCK). Postgres is the truth and serves the replay of anything older; the stream is
 * capped (MAXLEN ~ 1000) and expires a week after its last event.
 */
export class TimelineLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly redisPrefix: string,
    private readonly ttlSeconds = 7 * 24 * 3600,
  ) {}

  /** `<prefix>:incident:<id>:timeline`; on a Redis Cluster with the stream shard's tag, as run streams. */
  streamKey(incidentId: string): string {
    return `${this.redisPrefix}:incident:${streamTag(this.redis, incidentId)}${incidentId}:timeline`;
  }

  /**
   * Publishes a committed-or-committing event. Callers append under the incident's row lock, so ids
   * arrive in order; an id Redis refuses (not greater than the last) is already covered by the replay
   * from Postgres, and is dropped.
   */
  async append(event: TimelineEntry): Promise<void> {
    const key = this.streamKey(event.incident_id);
    try {
      await this.redis
        .multi()
        .xadd(
          key,
          'MAXLEN',
          '~',
          '1000',
          `${event.id}-0`,
          'k',
          event.kind,
          'a',
          event.created_at,
          'd',
          JSON.stringify(event),
          't',
          '0',
        )
        .expire(key, this.ttlSeconds)
        .exec();
    } catch {
      // Out of order or Redis away: subscribers re-read Postgres when they reconnect.
    }
  }

  async read(incidentId: string, afterSeq: number, count = 1000): Promise<RunEvent[]> {
    const entries = (await this.redis.xrange(
      this.streamKey(incidentId),
      `(${afterSeq}-0`,
      '+',
      'COUNT',
      count,
    )) as StreamEntry[];
    return entries.map((e) => parseRunEntry(incidentId, e));
  }

  async last(incidentId: string): Promise<RunEvent | undefined> {
    const [entry] = (await this.redis.xrevrange(
      this.streamKey(incidentId),
      '+',
      '-',
      'COUNT',
      1,
    )) as StreamEntry[];
    return entry ? parseRunEntry(incidentId, entry) : undefined;
  }
}

/** The wire form of a timeline event delivered by the hub (drops the hub's own fields). */
export function timelineEntryOf(e: RunEvent): TimelineEntry {
  const { seq: _seq, run_id: _run, at: _at, ...rest } = e as unknown as Record<string, unknown>;
  return rest as unknown as TimelineEntry;
}
