export * from './engine';
export * from './builtin-engine';
export * from './scripted-engine';
export * from './tools';
export * from './grounding';

import { BuiltinEngine } from './builtin-engine';
import type { AgentEngine } from './engine';
import { ScriptedEngine } from './scripted-engine';

/** The engine configuration names. */
export function createEngine(name: 'builtin' | 'scripted'): AgentEngine {
  return name === 'scripted' ? new ScriptedEngine() : new BuiltinEngine();
}
