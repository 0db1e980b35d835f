import { BadRequest } from '../errors';

/**
 * Caps on what one posted plan may hold (issue 24). Real plans stay far below them: the deepest plan of
 * the public corpus (../shared/realworld/tf-plan-json) nests 21 levels, and Terraform prints a long
 * value (a policy, user data) over many lines. A plan past a cap is a 400 that names it.
 */
export const PLAN_LIMITS = {
  /** Characters on one line of a text plan (a JSON plan may be one line: it is not held to this). */
  lineLength: 262_144,
  /** Nesting of objects and lists: brackets in a JSON plan, blocks and values in a text plan. */
  depth: 64,
  /**
   * Path elements in all the unknown and sensitive paths listed for one plan (`afterUnknown`,
   * `sensitive`): each path is a copy of its key chain, so the lists are bounded, not the plan.
   */
  pathElements: 1_000_000,
} as const;

export const tooDeep = (where: string) =>
  new BadRequest(
    `plan nests deeper than the cap of ${PLAN_LIMITS.depth} levels (${where}); no Terraform plan needs as many.`,
  );

/** Throws the cap's 400 when a line of `text` is longer than PLAN_LIMITS.lineLength. */
export function checkLineLengths(text: string): void {
  let start = 0;
  for (let line = 1; start <= text.length; line++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end - start > PLAN_LIMITS.lineLength)
      throw new BadRequest(
        `plan line ${line} is ${end - start} characters long, above the cap of ${PLAN_LIMITS.lineLength} characters per line of a text plan.`,
      );
    start = end + 1;
  }
}
