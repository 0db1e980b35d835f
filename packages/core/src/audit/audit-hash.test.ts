import { describe, expect, it } from 'vitest';
import { computeAuditHash, GENESIS_HASH } from './audit-log';

const entry = {
  tenant_id: 't1',
  seq: 1,
  at: new Date('2026-11-22T08:00:00.123Z'),
  actor: { type: 'user' as const, id: 'u1', email: 'a@b.c' },
  action: 'token.minted',
  target_type: 'api_token',
  target_id: 'k1',
  details: { scope: 'read', name: 'ci' },
};

describe('computeAuditHash', () => {
  it('is a sha256 hex digest, independent of key order', () => {
    const h = computeAuditHash(GENESIS_HASH, entry);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(computeAuditHash(GENESIS_HASH, { ...entry, details: { name: 'ci', scope: 'read' } })).toBe(h);
  });

  it('changes with the previous hash and with every field', () => {
    const h = computeAuditHash(GENESIS_HASH, entry);
    expect(computeAuditHash('1'.repeat(64), entry)).not.toBe(h);
    expect(computeAuditHash(GENESIS_HASH, { ...entry, seq: 2 })).not.toBe(h);
    expect(computeAuditHash(GENESIS_HASH, { ...entry, at: new Date('2026-11-22T08:00:00.124Z') })).not.toBe(
      h,
    );
    expect(
      computeAuditHash(GENESIS_HASH, { ...entry, details: { scope: 'read_write', name: 'ci' } }),
    ).not.toBe(h);
    expect(computeAuditHash(GENESIS_HASH, { ...entry, actor: { ...entry.actor, id: 'u2' } })).not.toBe(h);
  });
});
