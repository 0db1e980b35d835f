/** What the agent's tool groups share: input pieces and the resource lookup. */
import { z } from 'zod';
import type { Db } from '@opsi/db';
import { DOMAINS, SEVERITIES } from '@opsi/contracts';
import { findResourcesByRef } from '../repository';

export { SECONDARY_TYPES } from '../repository';

export const Domain = z.enum(DOMAINS);
export const Severity = z.enum(SEVERITIES);
export const ResourceRef = z.object({
  resource: z.string().min(1).describe('An ARN, a native id (vol-…, i-…, sg-…) or a name'),
});

export const round2 = (n: unknown) => Math.round(Number(n ?? 0) * 100) / 100;

export async function findResource(db: Db, tenantId: string, ref: string) {
  const rows = await findResourcesByRef(db, tenantId, ref);
  const [first, ...others] = rows;
  if (!first) return undefined;
  return {
    ...first,
    // Other resources of the same name, so a reader knows the name was ambiguous.
    ...(others.length
      ? { also_named: others.map((o) => ({ arn: o.arn, type: o.type, native_id: o.native_id })) }
      : {}),
  };
}

/** The resource types a what-if names (what a person recognises as a service's parts). */
export const NOTABLE = new Set([
  'aws_ec2_instance',
  'aws_ec2_target_group',
  'aws_ec2_application_load_balancer',
  'aws_ec2_autoscaling_group',
  'aws_route53_record',
  'aws_rds_db_instance',
  'aws_vpc_nat_gateway',
  'aws_vpc_subnet',
  'aws_elasticache_replication_group',
]);
