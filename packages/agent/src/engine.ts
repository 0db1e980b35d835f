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
  /** Aborted when the session is deleted or the turn's deadline passes. */
  signal: AbortSignal;
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
