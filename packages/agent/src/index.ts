export * from './engine';
export * from './builtin-engine';
export * from './scripted-engine';
export * from './tools';
export * from './grounding';
export * from './loop';

export * from './providers';

import { BuiltinEngine } from './builtin-engine';
import type { AgentEngine } from './engine';
import { createModelEngine } from './loop';
import { hostedModel, type EngineConfig, type EngineName } from './providers';
import { ScriptedEngine } from './scripted-engine';

/** The engine the configuration names; a bare name is enough for builtin and scripted. */
export function createEngine(config: EngineName | EngineConfig): AgentEngine {
  const c: EngineConfig = typeof config === 'string' ? { engine: config } : config;
  if (c.engine === 'scripted') return new ScriptedEngine();
  if (c.engine === 'builtin') return new BuiltinEngine();
  const { model, name } = hostedModel(c);
  return createModelEngine(model, {
    maxSteps: c.maxSteps ?? 8,
    maxRetries: c.maxRetries ?? 2,
    secrets: c.apiKey ? [c.apiKey] : [],
    name,
  });
}
export * from './plan-drafter';
