export * from './engine';
export * from './builtin-engine';
export * from './scripted-engine';
export * from './tools';
export * from './grounding';
export * from './loop';

import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { BuiltinEngine } from './builtin-engine';
import type { AgentEngine } from './engine';
import { createModelEngine } from './loop';
import { ScriptedEngine } from './scripted-engine';

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

/** The engine the configuration names; a bare name is enough for builtin and scripted. */
export function createEngine(config: EngineName | EngineConfig): AgentEngine {
  const c: EngineConfig = typeof config === 'string' ? { engine: config } : config;
  if (c.engine === 'scripted') return new ScriptedEngine();
  if (c.engine === 'builtin') return new BuiltinEngine();
  if (!c.model) throw new Error(`AGENT_ENGINE=${c.engine} needs AGENT_MODEL`);
  const options = {
    maxSteps: c.maxSteps ?? 8,
    maxRetries: c.maxRetries ?? 2,
    secrets: c.apiKey ? [c.apiKey] : [],
  };
  if (c.engine === 'openai') {
    if (!c.baseUrl) throw new Error('AGENT_ENGINE=openai needs AGENT_BASE_URL');
    const provider = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: c.baseUrl.replace(/\/+$/, ''),
      ...(c.apiKey ? { apiKey: c.apiKey } : {}),
    });
    return createModelEngine(provider.chatModel(c.model), { ...options, name: `openai:${c.model}` });
  }
  if (!c.apiKey) throw new Error('AGENT_ENGINE=anthropic needs AGENT_API_KEY');
  const provider = createAnthropic({
    baseURL: (c.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, ''),
    apiKey: c.apiKey,
  });
  return createModelEngine(provider(c.model), { ...options, name: `anthropic:${c.model}` });
}
export * from './plan-drafter';
