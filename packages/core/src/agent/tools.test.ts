import { describe, expect, it } from 'vitest';
import type { Db } from '@opsi/db';
import { agentToolsFor, buildAgentTools, TOOL_CACHE_TENANTS } from './tools';

// Stand-ins for database handles: the cache keys on the handle, and no tool runs here.
const handle = () => ({}) as unknown as Db;

describe('agentToolsFor (the tools built once per tenant)', () => {
  it('answers the same frozen list for a tenant, the full tool set, and other lists for other tenants and handles', () => {
    const db = handle();
    const first = agentToolsFor(db, 'tenant-a');
    expect(agentToolsFor(db, 'tenant-a')).toBe(first);
    expect(first.map((t) => t.name)).toEqual(buildAgentTools(db, 'tenant-a').map((t) => t.name));
    expect(Object.isFrozen(first)).toBe(true);
    expect(first.every((t) => Object.isFrozen(t))).toBe(true);
    // A turn cannot change the shared list or a tool in it.
    expect(() => (first as unknown as unknown[]).push({})).toThrow(TypeError);
    expect(() => {
      (first[0] as { description: string }).description = 'changed';
    }).toThrow(TypeError);
    expect(agentToolsFor(db, 'tenant-b')).not.toBe(first);
    expect(agentToolsFor(handle(), 'tenant-a')).not.toBe(first);
  });

  it('keeps at most `capacity` tenants per handle (TOOL_CACHE_TENANTS), dropping the least recently used', () => {
    expect(TOOL_CACHE_TENANTS).toBeGreaterThan(0);
    const db = handle();
    const at = (tenant: string) => agentToolsFor(db, tenant, 3);
    const kept = at('tenant-0');
    const dropped = at('tenant-1');
    const third = at('tenant-2');
    // Full; tenant-0 used again, so tenant-1 is now the least recently used.
    expect(at('tenant-0')).toBe(kept);
    at('one-more');
    expect(at('tenant-0')).toBe(kept);
    expect(at('tenant-2')).toBe(third);
    expect(at('tenant-1')).not.toBe(dropped);
  });
});
