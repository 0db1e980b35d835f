import { type Detector } from '../detector';
import {
  byEnv,
  dependentsOf,
  dependentsSentence,
  details,
  envOf,
  isProd,
  jsonArray,
  num,
  str,
  strings,
} from './common';

/**
 * R7 — ElastiCache replication groups without automatic failover: `automatic_failover <> 'enabled'`
 * (a missing value counts as not enabled, as in the reference, which passes only 'enabled'). When the
 * primary node fails, nothing promotes a replica: writes stop until someone acts. The member count
 * tells whether a replica exists to promote.
 * (steampipe-mod-aws-compliance `elasticache_replication_group_auto_failover_enabled`)
 */
export const elasticacheNoFailover: Detector = {
  id: 'sre.elasticache_no_failover',
  domain: 'sre',
  title: 'ElastiCache replication groups without automatic failover',
  sql: `
    select r.arn, r.native_id, r.name, r.account_id, r.region,
           r.attributes->>'automatic_failover' as automatic_failover,
           r.attributes->>'multi_az' as multi_az,
           r.attributes->>'cache_node_type' as cache_node_type,
           jsonb_array_length(${jsonArray("r.attributes->'member_clusters'")}) as members,
           ${envOf('r')} as env,
           ${dependentsOf('r')} as dependents
    from resources r
    where r.type = 'aws_elasticache_replication_group' and r.deleted_at is null
      and r.attributes->>'automatic_failover' is distinct from 'enabled'
    order by r.arn`,
  findings(rows) {
    return rows.map((row) => {
      const id = str(row.native_id);
      const members = num(row.members);
      const dependents = strings(row.dependents);
      const severity = byEnv(row.env, 'high', 'medium');
      return {
        rootKey: row.arn,
        title: `ElastiCache ${id} cannot fail over (automatic failover ${str(row.automatic_failover) || 'unset'})`,
        severity,
        narrative: `ElastiCache replication group ${id}${details(row.cache_node_type, row.env)} has automatic failover ${str(row.automatic_failover) || 'unset'}${row.multi_az ? ` and Multi-AZ ${str(row.multi_az)}` : ''}, with ${plural(members)}. If the primary node or its AZ fails, no replica is promoted: writes fail until someone ${members < 2 ? 'adds a replica and promotes it, and the cache starts empty' : 'promotes a replica by hand'}.${dependentsSentence(dependents, 'it')}`,
        confidence: 1,
        resources: [{ arn: row.arn, actionType: 'enable-failover', savings: 0 }],
        recommendation: {
          rationale: `Automatic failover with Multi-AZ promotes a replica in another AZ in about a minute. It needs at least one replica, which is billed like the primary node (a cost, not a saving). Run: ${members < 2 ? `aws elasticache increase-replica-count --replication-group-id ${id} --new-replica-count 1 --apply-immediately, then ` : ''}aws elasticache modify-replication-group --replication-group-id ${id} --automatic-failover-enabled --multi-az-enabled --apply-immediately`,
          actionType: 'enable-failover',
          savings: 0,
          effort: 'low',
          priority: isProd(row.env) ? 2 : 3,
        },
        reasoning: `automatic_failover = ${str(row.automatic_failover) || 'null'} (not 'enabled') for ${id}; ${members} member cluster(s), so ${members < 2 ? 'a replica must be added first' : 'a replica exists to promote'}. Severity ${severity} from env tag ${str(row.env) || 'absent'}. Savings 0.`,
      };
    });
  },
};

function plural(members: number): string {
  return members === 1 ? 'a single node and no replica' : `${members} nodes`;
}
