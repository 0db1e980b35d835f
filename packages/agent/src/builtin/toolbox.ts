import { EngineError, previewOf, type AgentTool, type TurnEvent } from '../engine';

export type ToolResult<T> =
  { status: 'ok'; output: T } | { status: 'unavailable' } | { status: 'error'; message: string };

/** Most tool calls in one turn: the engine's bounded number of steps. */
export const MAX_TOOL_CALLS = 16;

/** Errors that are an answer (no such finding, a query the sandbox refuses), not a failure of the turn. */
function isAnswerable(e: unknown): e is Error {
  if (!(e instanceof Error)) return false;
  if (['NotFound', 'BadRequest', 'SandboxRefused', 'ZodError'].includes(e.name)) return true;
  const status = (e as { status?: unknown }).status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/**
 * The turn's tools as the engine calls them: each call validated by the tool's schema, announced with
 * tool.started and closed with tool.finished, bounded in number, cancelled with the turn. Keeps every
 * output, so the answer can be checked against what the tools returned.
 */
export class ToolBox {
  /** Every successful output of this turn, as plain JSON (what grounding checks against). */
  readonly outputs: unknown[] = [];
  /** Tools a plan wanted that this turn does not have. */
  readonly missing = new Set<string>();
  private calls = 0;
  private readonly byName: Map<string, AgentTool>;

  constructor(
    tools: AgentTool[],
    private readonly emit: (event: TurnEvent) => Promise<void>,
    private readonly signal: AbortSignal,
  ) {
    this.byName = new Map(tools.map((t) => [t.name, t]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The tools among `names` this turn does not have (recorded as missing). */
  lacking(names: string[]): string[] {
    const lacking = names.filter((n) => !this.has(n));
    for (const n of lacking) this.missing.add(n);
    return lacking;
  }

  async call<T>(name: string, raw: Record<string, unknown>): Promise<ToolResult<T>> {
    this.signal.throwIfAborted();
    const tool = this.byName.get(name);
    if (!tool) {
      this.missing.add(name);
      return { status: 'unavailable' };
    }
    if (this.calls >= MAX_TOOL_CALLS) return { status: 'error', message: 'the step limit of this turn' };
    this.calls++;
    const parsed = tool.input.safeParse(raw);
    const input: unknown = parsed.success ? parsed.data : raw;
    await this.emit({ kind: 'tool.started', tool: name, input });
    if (!parsed.success) {
      const message = parsed.error.issues[0]?.message ?? 'invalid input';
      await this.emit({
        kind: 'tool.finished',
        tool: name,
        ok: false,
        output_preview: previewOf({ error: message }),
      });
      return { status: 'error', message };
    }
    let output: unknown;
    try {
      output = await tool.execute(parsed.data, this.signal);
    } catch (e) {
      if (this.signal.aborted) throw this.signal.reason;
      const message = e instanceof Error ? e.message : String(e);
      await this.emit({
        kind: 'tool.finished',
        tool: name,
        ok: false,
        output_preview: previewOf({ error: message }),
      });
      if (isAnswerable(e)) return { status: 'error', message };
      throw new EngineError(`The ${name} tool failed: ${message}`);
    }
    this.signal.throwIfAborted();
    const json = output === undefined ? null : (JSON.parse(JSON.stringify(output)) as unknown);
    this.outputs.push(json);
    await this.emit({ kind: 'tool.finished', tool: name, ok: true, output_preview: previewOf(json) });
    return { status: 'ok', output: json as T };
  }
}

/** The output of a result, or undefined when the call did not succeed. */
export function ok<T>(result: ToolResult<T>): T | undefined {
  return result.status === 'ok' ? result.output : undefined;
}
