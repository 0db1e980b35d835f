import { describe, expect, it } from 'vitest';
import {
  ACTIVE_FINDING_STATUSES,
  FINDING_STATUSES,
  LIFECYCLE_STATUSES,
  SEVERITIES,
  SEVERITY_RANK,
  UNRESOLVED_FINDING_STATUSES,
  isActiveFindingStatus,
  isUnresolvedFindingStatus,
} from './vocabulary';

describe('the shared vocabulary', () => {
  it('confirmed is set only by clustering: a status, not a lifecycle status, not active, but unresolved', () => {
    expect(FINDING_STATUSES).toContain('confirmed');
    expect(LIFECYCLE_STATUSES).not.toContain('confirmed');
    expect(isActiveFindingStatus('confirmed')).toBe(false);
    expect(isUnresolvedFindingStatus('confirmed')).toBe(true);
  });

  it('active findings are the lifecycle statuses still open; unresolved adds only the duplicates', () => {
    expect([...ACTIVE_FINDING_STATUSES]).toEqual(['open', 'acknowledged', 'in_progress']);
    for (const s of ACTIVE_FINDING_STATUSES) expect(LIFECYCLE_STATUSES).toContain(s);
    expect([...UNRESOLVED_FINDING_STATUSES].sort()).toEqual([...ACTIVE_FINDING_STATUSES, 'confirmed'].sort());
    for (const s of ['resolved', 'dismissed']) {
      expect(isActiveFindingStatus(s)).toBe(false);
      expect(isUnresolvedFindingStatus(s)).toBe(false);
    }
  });

  it('severities are ranked most severe first', () => {
    const ranks = SEVERITIES.map((s) => SEVERITY_RANK[s]);
    expect(ranks).toEqual([...ranks].sort((a, b) => b - a));
    expect(new Set(ranks).size).toBe(SEVERITIES.length);
  });
});
