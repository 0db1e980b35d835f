import {
  ElastiCacheClient,
  ListTagsForResourceCommand,
  paginateDescribeReplicationGroups,
} from '@aws-sdk/client-elasticache';
import { tolerate, type CollectContext } from './collect-context';
import { iso, mapBounded, orNull, snake, snakeList, tagRecord } from './shape';

/** ElastiCache (Redis/Valkey) replication groups and their tags. */
export async function collectElastiCache(ctx: CollectContext): Promise<void> {
  const { out, region } = ctx;
  const client = ctx.client(ElastiCacheClient);
  const groups = [];
  for await (const page of paginateDescribeReplicationGroups({ client, pageSize: 100 }, {}, ctx.send))
    groups.push(...(page.ReplicationGroups ?? []));
  await mapBounded(groups, ctx.width, async (g) => {
    if (!g.ReplicationGroupId || !g.ARN) return;
    // ListTagsForResource answers one resource per call and is not paginated.
    const tagged = await tolerate(
      client.send(new ListTagsForResourceCommand({ ResourceName: g.ARN }), ctx.send),
      ['ReplicationGroupNotFoundFault', 'InvalidReplicationGroupState'],
    );
    const tags = tagged.ok ? tagRecord(tagged.value.TagList) : {};
    out.add({
      type: 'aws_elasticache_replication_group',
      arn: g.ARN,
      nativeId: g.ReplicationGroupId,
      region,
      name: tags.Name ?? g.ReplicationGroupId,
      tags,
      attributes: {
        replication_group_id: g.ReplicationGroupId,
        arn: g.ARN,
        description: orNull(g.Description),
        status: orNull(g.Status),
        engine: orNull(g.Engine),
        automatic_failover: orNull(g.AutomaticFailover),
        multi_az: orNull(g.MultiAZ),
        cache_node_type: orNull(g.CacheNodeType),
        cluster_enabled: orNull(g.ClusterEnabled),
        member_clusters: g.MemberClusters ?? [],
        node_groups: snakeList(g.NodeGroups),
        at_rest_encryption_enabled: orNull(g.AtRestEncryptionEnabled),
        transit_encryption_enabled: orNull(g.TransitEncryptionEnabled),
        auth_token_enabled: orNull(g.AuthTokenEnabled),
        kms_key_id: orNull(g.KmsKeyId),
        snapshot_retention_limit: orNull(g.SnapshotRetentionLimit),
        snapshot_window: orNull(g.SnapshotWindow),
        configuration_endpoint: snake(g.ConfigurationEndpoint),
        replication_group_create_time: iso(g.ReplicationGroupCreateTime),
      },
    });
  });
}
