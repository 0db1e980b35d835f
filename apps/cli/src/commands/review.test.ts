import { describe, expect, it } from 'vitest';
import { decodePlanBytes } from './review';

const PLAN = 'Terraform will perform the following actions:\r\n  # aws_s3_bucket.b will be created — “b”\r\n';

describe('plan files as CI writes them', () => {
  it('UTF-16 LE with a BOM (PowerShell), without NULs or the BOM', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(PLAN, 'utf16le')]);
    expect(decodePlanBytes(bytes)).toBe(PLAN);
  });

  it('UTF-16 BE with a BOM', () => {
    const bytes = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(PLAN, 'utf16le').swap16()]);
    expect(decodePlanBytes(bytes)).toBe(PLAN);
  });

  it('UTF-8 with and without a BOM', () => {
    expect(decodePlanBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(PLAN)]))).toBe(PLAN);
    expect(decodePlanBytes(Buffer.from(PLAN))).toBe(PLAN);
  });
});
