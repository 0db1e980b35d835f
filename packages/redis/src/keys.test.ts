import { describe, expect, it } from 'vitest';
import { createRedis, hashTagOf, keySlot, STREAM_SHARDS, streamTag } from './index';

describe('hash tags', () => {
  it('reads a key’s tag as Redis Cluster does: the first {…} with something inside, else the whole key', () => {
    expect(hashTagOf('opsi:bull:{agent}:agent:wait')).toBe('agent');
    expect(hashTagOf('opsi:run:{stream-3}:r1:events')).toBe('stream-3');
    expect(hashTagOf('opsi:{}:{x}')).toBe('opsi:{}:{x}');
    expect(hashTagOf('opsi:budget:t:2026-11-28')).toBe('opsi:budget:t:2026-11-28');
    // Keys with one tag share a slot whatever else they hold.
    expect(keySlot('a:{agent}:wait')).toBe(keySlot('b:{agent}:fair'));
    expect(keySlot('{agent}')).not.toBe(keySlot('{pulse}'));
  });

  it('tags event streams only on a cluster, spreading ids over STREAM_SHARDS tags', () => {
    const single = createRedis('redis://127.0.0.1:1', 'command');
    const cluster = createRedis('redis://127.0.0.1:1', 'command', true);
    try {
      expect(streamTag(single, 'run-1')).toBe('');
      const tags = new Set(Array.from({ length: 500 }, (_, i) => streamTag(cluster, `run-${i}`)));
      expect(tags.size).toBe(STREAM_SHARDS);
      for (const tag of tags) expect(tag).toMatch(/^\{stream-\d+\}:$/);
    } finally {
      single.disconnect();
      cluster.disconnect();
    }
  });
});
