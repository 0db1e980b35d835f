/** Agent tools: resources (search, one in detail, its neighbours). */
import { z } from 'zod';
import { ResourceRef, round2, findResource } from './shared';
import { defineTool } from '../../define-tool';
import {
  findActiveFindingsOn,
  findNeighbourEdges,
  findResourceChanges,
  searchResources,
} from '../repository';

export const search_resources = defineTool({
  name: 'search_resources',
  description:
    'Search the inventory by name, id, type, service tag, account or region. Answers the most expensive matches first.',
  input: z.object({
    text: z.string().optional().describe('Part of a name, native id or ARN'),
    type: z.string().optional().describe('e.g. aws_ec2_instance, aws_ebs_volume, aws_rds_db_instance'),
    service: z.string().optional(),
    account_id: z.string().optional(),
    region: z.string().optional(),
    limit: z.number().int().min(1).max(50).default(15),
  }),
  async execute(i, { db, tenantId }) {
    const rows = await searchResources(db, tenantId, i);
    return {
      resources: rows.map((r) => ({
        ...r,
        monthly_cost: r.monthly_cost === null ? null : round2(r.monthly_cost),
      })),
    };
  },
});

export const get_resource = defineTool({
  name: 'get_resource',
  description:
    'One resource: its attributes as AWS describes them, monthly cost, console link, the open findings on it, and its recent changes.',
  input: ResourceRef,
  async execute(i, { db, tenantId }) {
    const r = await findResource(db, tenantId, i.resource);
    if (!r) return { found: false, resource: i.resource };
    const [findings, changes] = await Promise.all([
      findActiveFindingsOn(db, tenantId, r.arn),
      findResourceChanges(db, tenantId, r.arn),
    ]);
    return {
      found: true,
      ...r,
      monthly_cost: r.monthly_cost === null ? null : round2(r.monthly_cost),
      open_findings: findings,
      recent_changes: changes,
    };
  },
});

export const resource_neighbours = defineTool({
  name: 'resource_neighbours',
  description:
    'What a resource is connected to: attached volumes, subnets, security groups, roles, load balancers, alarms, dependencies.',
  input: ResourceRef,
  async execute(i, { db, tenantId }) {
    const r = await findResource(db, tenantId, i.resource);
    if (!r) return { found: false, resource: i.resource };
    const edges = await findNeighbourEdges(db, tenantId, r.arn);
    return {
      resource: { arn: r.arn, native_id: r.native_id, name: r.name, type: r.type },
      neighbours: edges,
    };
  },
});

/** This group's tools, in catalog order. */
export const RESOURCES_TOOLS = [search_resources, get_resource, resource_neighbours] as const;
