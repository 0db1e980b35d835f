import { describeCommand, type PlanResource, type StepDraft } from '@opsi/detectors';
import { DemoCommandError, parseCommand, SUPPORTED_COMMANDS } from '@opsi/inventory';

export interface PlanStepDraft extends StepDraft {
  final: boolean;
}

export interface PlanContext {
  findingId: string;
  evidenceRef: string | null;
  resources: PlanResource[];
  learningIds: string[];
  runbookIds: string[];
  /** The recommendation's text: ids it names (subnets to move to, a topic) may appear in a fix. */
  rationale: string;
}

/** AWS resource ids as they appear in commands: vol-…, i-…, sg-…, eipalloc-…, subnet-… */
const AWS_ID =
  /\b(?:vol|i|sg|snap|eipalloc|eipassoc|nat|subnet|rtb|rtbassoc|vpc|igw|eni|ami|lt)-[0-9a-f]{8,17}\b/g;
const ARN = /\barn:aws:[a-z0-9-]+:[a-z0-9-]*:\d{12}:[A-Za-z0-9/:._+=,@-]+/g;
const READ_ONLY = /^(describe|get|list)-/;

/**
 * The rules every plan obeys before it is shown, whoever drafted it (the built-in knowledge or a hosted
 * model): at most 8 steps, the last (and only the last) the platform's final check; each step with
 * instructions and citations of the finding, its evidence, resources, learnings or runbooks; at most one
 * fix, which must be an AWS CLI command the demo environment applies, naming only the cluster's ids; at
 * most one verification, read-only, with a "done when", or else "how to confirm" guidance.
 * Answers the problems found (empty: valid).
 */
export function validatePlanSteps(steps: PlanStepDraft[], ctx: PlanContext): string[] {
  const problems: string[] = [];
  if (steps.length < 1 || steps.length > 8) problems.push(`a plan has 1 to 8 steps, not ${steps.length}`);
  if (!steps.at(-1)?.final) problems.push('the last step must be the final check');
  if (steps.slice(0, -1).some((s) => s.final)) problems.push('only the last step may be the final check');
  const known = new Set<string>([
    ...ctx.resources.flatMap((r) => [r.native_id, r.arn]),
    ...(ctx.rationale.match(AWS_ID) ?? []),
    ...(ctx.rationale.match(ARN) ?? []),
  ]);
  const citable = new Set<string>([
    ctx.findingId,
    ...(ctx.evidenceRef ? [ctx.evidenceRef] : []),
    ...ctx.resources.map((r) => r.arn),
    ...ctx.learningIds,
    ...ctx.runbookIds,
  ]);
  steps.forEach((s, i) => {
    const n = `step ${i + 1}`;
    if (!s.title?.trim() || s.title.length > 200) problems.push(`${n}: a title of 1 to 200 characters`);
    if (!s.instructions?.trim() || s.instructions.length > 4000)
      problems.push(`${n}: instructions of 1 to 4000 characters`);
    if (!s.citations?.length) problems.push(`${n}: instructions must cite the evidence`);
    for (const c of s.citations ?? [])
      if (!citable.has(c.ref))
        problems.push(`${n}: cites ${c.kind} ${c.ref}, which is not part of this finding`);
    if (s.fix_command) {
      if (s.final) problems.push(`${n}: the final check has no fix command`);
      try {
        const { service, operation } = parseCommand(s.fix_command);
        if (!SUPPORTED_COMMANDS.includes(`${service} ${operation}`))
          problems.push(`${n}: "aws ${service} ${operation}" is not a fix command the platform knows`);
      } catch (e) {
        problems.push(
          `${n}: the fix is not a plain AWS CLI command (${e instanceof DemoCommandError ? e.message : 'unparsable'})`,
        );
      }
      const named = [...(s.fix_command.match(AWS_ID) ?? []), ...(s.fix_command.match(ARN) ?? [])].filter(
        (id) => !id.includes(':alarm:') && !id.includes(':sns:'),
      );
      for (const id of named)
        if (!known.has(id))
          problems.push(`${n}: the fix names ${id}, which is not a resource of this finding`);
    }
    if (s.verification) {
      if (!s.verification.done_when?.trim()) problems.push(`${n}: a verification needs its "done when"`);
      if (!s.final) {
        const words = s.verification.command.trim().split(/\s+/);
        if (words[0] !== 'aws' || !READ_ONLY.test(words[2] ?? ''))
          problems.push(`${n}: the verification must be a read-only describe, get or list call`);
      }
    }
    if (!s.final && s.check && !s.verification) problems.push(`${n}: a check needs its verification command`);
    if (!s.verification && !s.how_to_confirm?.trim())
      problems.push(`${n}: without a verification, the step needs "how to confirm" guidance`);
    if (
      s.check &&
      !ctx.resources.some((r) => r.arn === s.check!.arn || s.check!.type === 'aws_cloudwatch_alarm')
    )
      problems.push(`${n}: the check describes a resource outside this finding`);
    if (s.check && s.verification && !s.final) {
      // The verification shown is the describe call of the checked resource's type.
      const expected = describeCommand({
        type: s.check.type,
        native_id: s.check.native_id,
        arn: s.check.arn,
        region: s.check.region,
      });
      if (
        expected.split(' ').slice(0, 3).join(' ') !==
        s.verification.command.trim().split(/\s+/).slice(0, 3).join(' ')
      )
        problems.push(`${n}: the verification command does not describe the checked resource`);
    }
  });
  return problems;
}
