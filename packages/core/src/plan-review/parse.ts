import { BadRequest } from '../errors';
import { isJsonPlan, parsePlanJson } from './parse-json';
import { parsePlanText } from './parse-text';
import type { ParsedPlan } from './plan';

const EXPECTED =
  'Expected the output of `terraform plan` (text, colours and CI log lines around it are fine) or of `terraform show -json <planfile>`.';

/** Reads a posted plan, text or JSON; anything that is not Terraform output is a 400 saying what was expected. */
export function parsePlan(input: string): ParsedPlan {
  const trimmed = input.trim();
  if (!trimmed) throw new BadRequest('plan is empty. ' + EXPECTED);
  if (trimmed.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(trimmed);
    } catch (e) {
      throw new BadRequest(`plan looks like JSON but does not parse (${(e as Error).message}). ${EXPECTED}`);
    }
    if (!isJsonPlan(doc))
      throw new BadRequest(
        `plan is JSON but not a Terraform plan: it has no format_version with resource_changes or planned_values (a state from \`terraform show -json\` without a plan file is not a plan). ${EXPECTED}`,
      );
    return parsePlanJson(doc);
  }
  const parsed = parsePlanText(input);
  if (!parsed)
    throw new BadRequest(
      `plan is not Terraform plan output: no "Terraform will perform the following actions", resource header ("# aws_x.y will be created"), "Plan: N to add" or "No changes." line was found. ${EXPECTED}`,
    );
  if (!parsed.changes.length && !parsed.drift.length && !parsed.noChanges && parsed.errors.length)
    throw new BadRequest(`the posted plan failed: ${parsed.errors.slice(0, 3).join('; ')}`);
  return parsed;
}
