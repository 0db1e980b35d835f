import { z } from 'zod';
import type { AgentTool, ToolInfo } from '@opsi/agent';
import type { Db } from '@opsi/db';
import { INCIDENT_TOOLS } from '../incidents';
import { bindTools, type ToolDefinition } from '../define-tool';
import { ACTIVITY_TOOLS } from './tools/activity';
import { COMPUTE_TOOLS } from './tools/compute';
import { FINDINGS_TOOLS } from './tools/findings';
import { GRAPH_TOOLS } from './tools/graph';
import { KNOWLEDGE_TOOLS } from './tools/knowledge';
import { RESOURCES_TOOLS } from './tools/resources';

/**
 * Every tool of the agent, in catalog order: one file per group under `tools/` (and the incident tools in
 * the incidents domain), each defined once with `defineTool`. Every one is read-only and every query is
 * bound to the tenant (the SQL tool through the sandbox), so no prompt can reach another tenant's data or
 * change anything.
 */
export const AGENT_TOOLS: readonly ToolDefinition[] = [
  ...FINDINGS_TOOLS,
  ...RESOURCES_TOOLS,
  ...GRAPH_TOOLS,
  ...ACTIVITY_TOOLS,
  ...KNOWLEDGE_TOOLS,
  ...COMPUTE_TOOLS,
  ...INCIDENT_TOOLS,
];

/** The agent's tools bound to one tenant. */
export function buildAgentTools(db: Db, tenantId: string): AgentTool[] {
  return bindTools(AGENT_TOOLS, { db, tenantId });
}

const TOOL_NAMES = AGENT_TOOLS;

/** Tenants whose built tools are kept per database handle (the least recently used beyond it are dropped). */
export const TOOL_CACHE_TENANTS = 1000;
const builtTools = new WeakMap<Db, Map<string, readonly AgentTool[]>>();

/**
 * The agent's tools for one tenant, built once and kept: building them makes every tool's zod input
 * schema again, about 1 ms of CPU, which every agent turn paid before its first model step (a sixth of
 * the worker's CPU per turn under load, bench/runs (e)). The tools hold nothing but the database handle
 * and the tenant id, so one frozen list serves every turn of the tenant.
 */
export function agentToolsFor(db: Db, tenantId: string, capacity = TOOL_CACHE_TENANTS): readonly AgentTool[] {
  let byTenant = builtTools.get(db);
  if (!byTenant) builtTools.set(db, (byTenant = new Map()));
  let tools = byTenant.get(tenantId);
  if (tools) {
    // Most recently used last, so the first key is the one to drop.
    byTenant.delete(tenantId);
  } else {
    tools = Object.freeze(buildAgentTools(db, tenantId).map((t) => Object.freeze(t)));
    if (byTenant.size >= capacity) byTenant.delete(byTenant.keys().next().value!);
  }
  byTenant.set(tenantId, tools);
  return tools;
}

/** The tool catalog of a tenant: name, description and input schema. */
export function availableTools(_tenant: { id: string; tier: string }): ToolInfo[] {
  return TOOL_NAMES.map((t) => {
    const schema = z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    return { name: t.name, description: t.description, input_schema: schema };
  });
}
