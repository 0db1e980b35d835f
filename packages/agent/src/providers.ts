import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';

/**
 * The hosted models, in one module: the agent's engine (createEngine) and the plan drafter
 * (createPlanDrafter) both take their model from `hostedModel`, so a setting means the same to both.
 */

/** The engine configuration names (AGENT_ENGINE). */
export type EngineName = 'builtin' | 'scripted' | 'openai' | 'anthropic';

/** The agent settings of the configuration (AGENT_*), as createEngine takes them. */
export interface EngineConfig {
  engine: EngineName;
  /** The model id (AGENT_MODEL); required for openai and anthropic. */
  model?: string | undefined;
  /** The API's base URL (AGENT_BASE_URL): required for openai; Anthropic's own API when unset. */
  baseUrl?: string | undefined;
  /** Sent as `Authorization: Bearer` (openai) or `x-api-key` (anthropic); never logged. */
  apiKey?: string | undefined;
  /** Most model calls per pass of the loop (AGENT_MAX_STEPS). */
  maxSteps?: number | undefined;
  /** Retries of a failed model call (AGENT_MAX_RETRIES). */
  maxRetries?: number | undefined;
}

/** Anthropic's API, named explicitly so the SDK never falls back to its own environment variables. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

/** A hosted engine's model and its display name (`openai:<model>`), or an error naming the missing setting. */
export function hostedModel(c: EngineConfig): { model: LanguageModel; name: string } {
  if (c.engine !== 'openai' && c.engine !== 'anthropic')
    throw new Error(`AGENT_ENGINE=${c.engine} is not a hosted model`);
  if (!c.model) throw new Error(`AGENT_ENGINE=${c.engine} needs AGENT_MODEL`);
  if (c.engine === 'openai') {
    if (!c.baseUrl) throw new Error('AGENT_ENGINE=openai needs AGENT_BASE_URL');
    const provider = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: c.baseUrl.replace(/\/+$/, ''),
      ...(c.apiKey ? { apiKey: c.apiKey } : {}),
    });
    return { model: provider.chatModel(c.model), name: `openai:${c.model}` };
  }
  if (!c.apiKey) throw new Error('AGENT_ENGINE=anthropic needs AGENT_API_KEY');
  const provider = createAnthropic({
    baseURL: (c.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, ''),
    apiKey: c.apiKey,
  });
  return { model: provider(c.model), name: `anthropic:${c.model}` };
}
