import type { z } from 'zod';

/**
 * A tool the agent may call: read-only, already scoped to the caller's tenant (the worker builds the
 * set for each turn), with a zod schema for its input.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one list holds tools of different input types
export interface AgentTool<I = any, O = unknown> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  execute(input: I, signal: AbortSignal): Promise<O>;
}

/** One earlier message of the session, oldest first. */
export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface TurnInput {
  tenantId: string;
  sessionId: string;
  runId: string;
  prompt: string;
  history: ConversationMessage[];
  /** When set, the turn may use only these tools. */
  selectedTools?: string[] | undefined;
  /** The tools of this turn (selected_tools already applied), scoped to the tenant. */
  tools: AgentTool[];
  /** Aborted when the session is deleted or the turn's deadline passes. */
  signal: AbortSignal;
  /**
   * The tenant's active learnings (facts the team taught), newest first: part of every turn, so a hosted
   * model reads them with the system prompt and may cite them like tool output.
   */
  learnings?: TurnLearning[] | undefined;
  /**
   * The incident this turn is bound to (a war room's session, or an investigation): its record, alerts
   * and latest timeline events, as the incident tools return them. Grounds like tool output.
   */
  incident?: TurnIncident | undefined;
}

export interface TurnIncident {
  id: string;
  /** What get_incident answered for it, plus its latest timeline events. */
  context: Record<string, unknown>;
  /** An investigation run (the prompt asks to investigate it), not a conversation turn. */
  investigation?: boolean;
}

export interface TurnLearning {
  id: string;
  fact: string;
  service: string | null;
}

/** What an engine streams while it works; the runner numbers and stores each one. */
export type TurnEvent =
  | { kind: 'message.delta'; text: string }
  | { kind: 'tool.started'; tool: string; input: unknown }
  | { kind: 'tool.finished'; tool: string; ok: boolean; output_preview: string };

/**
 * The seam between the run machinery and the agent: conversation in, events out, a reply at the end.
 * The hosted-model loop and the offline engine implement it; so does the scripted engine of the tests.
 */
export interface AgentEngine {
  readonly name: string;
  runTurn(input: TurnInput, emit: (event: TurnEvent) => Promise<void>): Promise<{ reply: string }>;
}

/** A failure of the model or a tool: the run ends with run.failed and this detail (no retry). */
export class EngineError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'EngineError';
  }
}

/** Resolves after `ms`, or rejects as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A short text preview of a tool's output, for tool.finished events. */
export function previewOf(output: unknown, max = 400): string {
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
