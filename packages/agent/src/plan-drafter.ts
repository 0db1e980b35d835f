import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText, type LanguageModel } from 'ai';
import { ANTHROPIC_BASE_URL, type EngineConfig } from './index';
import { describeModelError } from './loop';

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
Answer ONLY a JSON object {"steps":[{"title":string,"instructions":string,"fix_command":string|null}]} with exactly one entry per built-in step, in the same order.
Rules: keep each step's meaning; instructions must cite the evidence in words and name the exact resource ids; fix_command is either the built-in step's command (you may keep it unchanged) or null; never invent resource ids, regions or commands; never add steps.`;

/** The model a hosted AGENT_ENGINE names, for plan drafting. */
function modelOf(c: EngineConfig): LanguageModel {
  if (c.engine === 'openai') {
    const provider = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: (c.baseUrl ?? '').replace(/\/+$/, ''),
      ...(c.apiKey ? { apiKey: c.apiKey } : {}),
    });
    return provider.chatModel(c.model!);
  }
  return createAnthropic({
    baseURL: (c.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, ''),
    apiKey: c.apiKey!,
  })(c.model!);
}

/**
 * A plan drafter on the hosted model (AGENT_ENGINE openai or anthropic): the model rewrites the built-in
 * steps' titles and instructions and may drop a fix; the checks stay the built-in ones. The plan service
 * validates the draft against the same rules as the built-in steps before anything is shown.
 */
export function createPlanDrafter(c: EngineConfig) {
  if (c.engine !== 'openai' && c.engine !== 'anthropic') return undefined;
  const model = modelOf(c);
  return {
    name: `${c.engine}:${c.model}`,
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
      let text = '';
      try {
        const result = streamText({
          model,
          system: SYSTEM,
          prompt,
          abortSignal: signal,
          maxRetries: c.maxRetries ?? 2,
        });
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') text += part.text;
          else if (part.type === 'error') throw part.error;
        }
      } catch (e) {
        throw new Error(describeModelError(e, c.apiKey ? [c.apiKey] : []), { cause: e });
      }
      const json = /\{[\s\S]*\}/.exec(text)?.[0];
      let parsed: { steps?: Array<{ title?: unknown; instructions?: unknown; fix_command?: unknown }> };
      try {
        parsed = JSON.parse(json ?? '') as typeof parsed;
      } catch (e) {
        throw new Error('The model did not answer the plan as JSON.', { cause: e });
      }
      const steps = parsed.steps ?? [];
      if (steps.length !== builtIn.length)
        throw new Error(`The model answered ${steps.length} steps for ${builtIn.length}.`);
      return builtIn.map((b, i) => ({
        ...b,
        title: String(steps[i]!.title ?? ''),
        instructions: String(steps[i]!.instructions ?? ''),
        fix_command: typeof steps[i]!.fix_command === 'string' ? (steps[i]!.fix_command as string) : null,
      }));
    },
  };
}
