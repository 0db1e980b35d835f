import { NoObjectGeneratedError, Output, streamText } from 'ai';
import { z } from 'zod';
import { describeModelError } from './loop';
import { hostedModel, type EngineConfig } from './providers';

/** A step as the plan service drafts it (structurally the detectors' StepDraft). */
export interface DraftStep {
  title: string;
  instructions: string;
  citations: Array<{ kind: 'finding' | 'evidence' | 'resource' | 'learning' | 'runbook'; ref: string }>;
  fix_command: string | null;
  verification: { command: string; done_when: string } | null;
  check: unknown;
  how_to_confirm: string | null;
}

export interface PlanDraftInput {
  findingId: string;
  checkId: string;
  title: string;
  resources: Array<{ arn: string; type: string; native_id: string; region: string }>;
}

const SYSTEM = `You improve the steps of a cloud remediation plan. You receive the finding and its built-in steps as JSON.
Answer a JSON object {"steps":[{"title":string,"instructions":string,"fix_command":string|null}]} with exactly one entry per built-in step, in the same order.
Rules: keep each step's meaning; instructions must cite the evidence in words and name the exact resource ids; fix_command is either the built-in step's command (you may keep it unchanged) or null; never invent resource ids, regions or commands; never add steps.`;

/** What the model must answer: the SDK asks for it (JSON schema or JSON mode) and validates the answer. */
const Draft = z.object({
  steps: z.array(
    z.object({
      title: z.string().min(1),
      instructions: z.string().min(1),
      fix_command: z.string().nullable(),
    }),
  ),
});

/**
 * A plan drafter on the hosted model (AGENT_ENGINE openai or anthropic): the model rewrites the built-in
 * steps' titles and instructions and may drop a fix; the checks stay the built-in ones. The plan service
 * validates the draft against the same rules as the built-in steps before anything is shown.
 */
export function createPlanDrafter(c: EngineConfig) {
  if (c.engine !== 'openai' && c.engine !== 'anthropic') return undefined;
  const { model, name } = hostedModel(c);
  return {
    name,
    async draft(input: PlanDraftInput, builtIn: DraftStep[], signal: AbortSignal): Promise<DraftStep[]> {
      const prompt = JSON.stringify({
        finding: { id: input.findingId, check: input.checkId, title: input.title },
        resources: input.resources.map((r) => ({
          arn: r.arn,
          type: r.type,
          id: r.native_id,
          region: r.region,
        })),
        steps: builtIn.map((s) => ({
          title: s.title,
          instructions: s.instructions,
          fix_command: s.fix_command,
        })),
      });
      let steps: z.infer<typeof Draft>['steps'];
      try {
        const result = streamText({
          model,
          system: SYSTEM,
          prompt,
          output: Output.object({ schema: Draft, name: 'plan_steps' }),
          abortSignal: signal,
          maxRetries: c.maxRetries ?? 2,
        });
        for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
        steps = (await result.output).steps;
      } catch (e) {
        if (NoObjectGeneratedError.isInstance(e))
          throw new Error('The model did not answer the plan in the asked shape.', { cause: e });
        throw new Error(describeModelError(e, c.apiKey ? [c.apiKey] : []), { cause: e });
      }
      if (steps.length !== builtIn.length)
        throw new Error(`The model answered ${steps.length} steps for ${builtIn.length}.`);
      return builtIn.map((b, i) => ({
        ...b,
        title: steps[i]!.title,
        instructions: steps[i]!.instructions,
        fix_command: steps[i]!.fix_command,
      }));
    },
  };
}
