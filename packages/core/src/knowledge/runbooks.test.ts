import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_RUNBOOKS } from './runbooks';

/**
 * Each built-in runbook's text (title, service, applies_to, steps) as a digest, with the date the text
 * last changed. Editing a runbook's text fails this test until its `textUpdatedAt` (in runbooks.ts)
 * and the row here are both brought up to date: the date GET /api/v1/runbooks answers stays true.
 */
const TEXTS: Record<string, [updatedAt: string, digest: string]> = {
  'builtin:ebs-storage-waste': ['2026-11-24T22:05:23.000Z', '3c57d616ba5e42af'],
  'builtin:idle-compute': ['2026-11-24T22:05:23.000Z', 'f0c6a7e7ce791139'],
  'builtin:unused-network': ['2026-11-24T22:05:23.000Z', 'f52c23971d6d22d4'],
  'builtin:snapshots-and-logs': ['2026-11-24T22:05:23.000Z', '7e9613981cdf26af'],
  'builtin:network-exposure': ['2026-11-24T22:05:23.000Z', '8249ae8daa7713fd'],
  'builtin:identity': ['2026-11-24T22:05:23.000Z', 'd9f3a49f1bc985eb'],
  'builtin:data-exposure': ['2026-11-24T22:05:23.000Z', 'bb83dcb671adb5c1'],
  'builtin:instance-hardening': ['2026-11-24T22:05:23.000Z', '6bdc43d95038adf3'],
  'builtin:database-resilience': ['2026-11-24T22:05:23.000Z', '6e23790cc90ff70b'],
  'builtin:availability': ['2026-11-24T22:05:23.000Z', '13141804bcdb32af'],
  'builtin:alarms': ['2026-11-24T22:05:23.000Z', '42cd7f9b2c5576ac'],
};

const digest = (r: (typeof BUILT_IN_RUNBOOKS)[number]) =>
  createHash('sha256')
    .update(JSON.stringify([r.title, r.service, r.applies_to, r.steps]))
    .digest('hex')
    .slice(0, 16);

describe('built-in runbooks', () => {
  it('each carries the date its text last changed, and that date moves with the text', () => {
    expect(Object.keys(TEXTS).sort()).toEqual(BUILT_IN_RUNBOOKS.map((r) => r.id).sort());
    for (const r of BUILT_IN_RUNBOOKS) {
      expect(r.updated_at, r.id).toBeInstanceOf(Date);
      expect(Number.isNaN(r.updated_at.getTime()), r.id).toBe(false);
      expect([r.updated_at.toISOString(), digest(r)], `${r.id}: text changed, give it a new date`).toEqual(
        TEXTS[r.id],
      );
    }
  });
});
