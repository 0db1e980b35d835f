import { listRecordings } from '@opsi/test-support/aws-peer';
import { describe, expect, it } from 'vitest';

/**
 * The AWS peer's recordings say where each answer comes from: a peer is worth only as much as its
 * answers are AWS's own, so a recording without a source (or whose source cannot be found again) is
 * our idea of AWS, not AWS.
 */

const COMMIT = /\b[0-9a-f]{40}\b/;
/** `owner/repo path @ commit`, a page of AWS's documentation, or a file of ../shared/realworld. */
const SOURCE =
  /^([A-Za-z0-9-]+\/[A-Za-z0-9._-]+ \S+ @ [0-9a-f]{40}\b|https:\/\/docs\.aws\.amazon\.com\/\S+|\.\.\/shared\/realworld\/\S+)/;

describe('AWS peer recordings', () => {
  const recordings = listRecordings();

  it('are there', () => {
    expect(recordings.length).toBeGreaterThan(50);
  });

  it('are AWS published answers, but for the few no published body was found for', () => {
    // Each of these says why in its header; a new recording comes from a published source.
    expect(
      recordings
        .filter((r) => r.header.some(([k, v]) => k === 'fidelity' && v.startsWith('unverified')))
        .map((r) => r.file),
    ).toEqual([
      's3/GetBucketPolicyStatus@bucket-1355863083.xml',
      's3/GetPublicAccessBlock@bucket-1355863083.xml',
    ]);
  });

  it.each(recordings.map((r) => [r.file, r.header] as const))(
    '%s names its source and how faithfully it follows it',
    (_file, header) => {
      expect(
        header.every(([k]) => k !== ''),
        'every header line is `# key: value`',
      ).toBe(true);
      const sources = header.filter(([k]) => k === 'source').map(([, v]) => v);
      expect(sources).toHaveLength(1);
      expect(sources[0]).toMatch(SOURCE);
      const fidelity = header.filter(([k]) => k === 'fidelity').map(([, v]) => v);
      expect(fidelity).toHaveLength(1);
      expect(fidelity[0]).toMatch(/^(verbatim|rendered|unverified) \(.+\)$/);
      // A body taken from a repository names the commit it was read at, so it can be read again.
      if (!sources[0]!.startsWith('https://') && !sources[0]!.startsWith('../shared/'))
        expect(sources[0]).toMatch(COMMIT);
    },
  );
});
