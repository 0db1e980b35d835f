import { BadRequest } from '../errors';
import { blankFraming, decodePlanText, jsonExtent, wrappedStdout } from './input';
import { checkLineLengths } from './limits';
import { isJsonPlan, parsePlanJson } from './parse-json';
import { parsePlanText } from './parse-text';
import type { ParsedPlan } from './plan';

const EXPECTED =
  'Expected the output of `terraform plan` (text, colours and CI log lines around it are fine) or of `terraform show -json <planfile>`.';

const NOT_A_PLAN = `plan is JSON but not a Terraform plan: it has no format_version with resource_changes or planned_values, nor a resource_changes list (a state from \`terraform show -json\` without a plan file is not a plan). ${EXPECTED}`;

/**
 * Reads a posted plan, text or JSON, as Terraform or CI wrote it (input.ts: byte-order marks, UTF-16,
 * hashicorp/setup-terraform's framing); anything that is not Terraform output is a 400 saying what
 * was expected, and so is a plan past one of PLAN_LIMITS.
 */
export function parsePlan(input: string): ParsedPlan {
  const decoded = decodePlanText(input);
  if (!decoded.trim()) throw new BadRequest('plan is empty. ' + EXPECTED);
  const text = blankFraming(decoded);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    // A JSON plan, perhaps with the wrapper's or a shell's lines after it.
    const extent = jsonExtent(text);
    const doc = parseJson(extent ? text.slice(extent.start, extent.end) : trimmed.trimEnd());
    if (!isJsonPlan(doc)) throw new BadRequest(NOT_A_PLAN);
    return parsePlanJson(doc);
  }
  // JSON on a line of its own inside CI framing (`terraform show -json` run through the wrapper).
  const extent = jsonExtent(text);
  if (extent) {
    const doc = tryJson(text.slice(extent.start, extent.end));
    if (isJsonPlan(doc)) return parsePlanJson(doc);
  }
  checkLineLengths(text);
  const parsed = parsePlanText(text);
  if (!parsed) {
    // Only the wrapper's log of the output, escaped: read that.
    const logged = wrappedStdout(decoded);
    if (logged !== null && logged !== decoded && !logged.includes('::debug::')) return parsePlan(logged);
    throw new BadRequest(
      `plan is not Terraform plan output: no "Terraform will perform the following actions", resource header ("# aws_x.y will be created"), "Plan: N to add" or "No changes." line was found. ${EXPECTED}`,
    );
  }
  if (!parsed.changes.length && !parsed.drift.length && !parsed.noChanges && parsed.errors.length)
    throw new BadRequest(`the posted plan failed: ${parsed.errors.slice(0, 3).join('; ')}`);
  return parsed;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BadRequest(`plan looks like JSON but does not parse (${(e as Error).message}). ${EXPECTED}`);
  }
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
