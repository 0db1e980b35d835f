import type { z } from 'zod';
import type { AgentTool } from '@opsi/agent';
import type { Db } from '@opsi/db';

/** What a tool runs against: the database and the one tenant whose data it may read. */
export interface ToolScope {
  db: Db;
  tenantId: string;
}

/** A tool as defined once, for every tenant: bound to one with `bindTools`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one list holds tools of different inputs
export interface ToolDefinition<I = any, O = unknown> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  execute(input: I, scope: ToolScope, signal: AbortSignal): Promise<O>;
}

/**
 * Defines a tool: its input schema is made once (not per tenant or per turn), and `execute` gets the
 * parsed input typed from that schema, plus the scope it is bound to.
 */
export function defineTool<S extends z.ZodType, O>(tool: {
  name: string;
  description: string;
  input: S;
  execute(input: z.output<S>, scope: ToolScope, signal: AbortSignal): Promise<O>;
}): ToolDefinition<z.output<S>, O> {
  return tool as ToolDefinition<z.output<S>, O>;
}

/** The tools bound to one tenant, as the engine takes them. */
export function bindTools(tools: readonly ToolDefinition[], scope: ToolScope): AgentTool[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    input: t.input,
    execute: (input: unknown, signal: AbortSignal) => t.execute(input, scope, signal),
  }));
}
