/** An agent tool as the catalog lists it. */
export interface ToolInfo {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/**
 * The tools a tenant's agent may use. None exist until the agent's own work lands (findings, resources,
 * incidents, learnings, runbooks, inventory SQL); `selected_tools` naming any other tool is refused.
 */
export function availableTools(_tenant: { id: string; tier: string }): ToolInfo[] {
  return [];
}
