import { z } from 'zod';

/** Every error the API answers, but the 402 below. */
export const ErrorBody = z.object({ detail: z.string() }).meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The contract's 402 for features gated by the tenant's plan. */
export const TierRestrictedBody = z
  .object({ error: z.literal('tier_restricted'), message: z.string(), upgrade_required: z.literal(true) })
  .meta({ id: 'TierRestricted' });

export const Uuid = z.uuid();
export const IdParams = z.object({ id: z.string().min(1).max(200) });
export type IdParams = z.infer<typeof IdParams>;

export const Timestamp = z.iso.datetime({ offset: true });

export const SuccessResponse = z.object({ success: z.literal(true) });

export const VersionResponse = z
  .object({ service: z.string(), api_version: z.literal('v1'), revision: z.string() })
  .meta({ id: 'Version' });
export type VersionResponse = z.infer<typeof VersionResponse>;

/**
 * Whether a UTF-16 code unit is what `\s` matches in a JavaScript pattern (and what `trim()` removes):
 * ASCII whitespace, NBSP, the Zs spaces, line and paragraph separators, BOM. For scanners that replace
 * patterns which backtracked on long runs of it (the plan parser, the agent's prompt reader).
 */
export function isPatternSpace(c: number): boolean {
  if (c === 32 || (c >= 9 && c <= 13)) return true;
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
