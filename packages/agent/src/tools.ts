/** An agent tool as the catalog lists it. */
export interface ToolInfo {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}
