import { describe, expect, it } from 'vitest';
import { checkGrounding, extractClaims } from './grounding';

const output = {
  total: 3,
  findings: [
    {
      id: '3f1a0c1e-1111-4000-8000-000000000001',
      title: 'Unattached io1 volume vol-0123456789abcdef0: 500 GiB',
      monthly_savings: 322.5,
    },
    {
      id: '3f1a0c1e-1111-4000-8000-000000000002',
      arn: 'arn:aws:ec2:us-east-1:123456789012:volume/vol-0aaaaaaaaaaaaaaaa',
      monthly_savings: 4,
    },
  ],
  since: new Date('2026-10-31T00:00:00Z'),
};

describe('grounding', () => {
  it('extracts ids and numbers, not dates or list markers', () => {
    const claims = extractClaims(
      '1. Delete vol-0123456789abcdef0 (finding 3f1a0c1e-1111-4000-8000-000000000001) to save $322.50 a month since 2026-10-31.',
    );
    expect(claims.ids).toEqual(['3f1a0c1e-1111-4000-8000-000000000001', 'vol-0123456789abcdef0']);
    expect(claims.numbers).toEqual(['$322.50']);
  });

  it('accepts what the tools said, at the precision shown', () => {
    expect(
      checkGrounding(
        'There are 3 open findings; the biggest saves $322.50 (about $322) on vol-0123456789abcdef0.',
        [output],
      ).grounded,
    ).toBe(true);
    expect(
      checkGrounding('See arn:aws:ec2:us-east-1:123456789012:volume/vol-0aaaaaaaaaaaaaaaa: $4.00 a month.', [
        output,
      ]).grounded,
    ).toBe(true);
  });

  it('catches a number or an id that no tool returned', () => {
    const report = checkGrounding('Deleting vol-0bbbbbbbbbbbbbbbb saves $510.00 a month across 7 findings.', [
      output,
    ]);
    expect(report).toEqual({
      grounded: false,
      ungroundedIds: ['vol-0bbbbbbbbbbbbbbbb'],
      ungroundedNumbers: ['$510.00', '7'],
    });
  });
});
