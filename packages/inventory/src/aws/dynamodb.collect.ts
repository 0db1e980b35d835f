import {
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTagsOfResourceCommand,
  paginateListTables,
} from '@aws-sdk/client-dynamodb';
import { tolerate, type CollectContext } from './collect-context';
import { iso, mapBounded, orNull, snake, snakeList, tagRecord } from './shape';

/** DynamoDB tables with their point-in-time-recovery status and tags. */
export async function collectDynamoDb(ctx: CollectContext): Promise<void> {
  const client = ctx.client(DynamoDBClient);
  const names: string[] = [];
  for await (const page of paginateListTables({ client, pageSize: 100 }, {}, ctx.send))
    names.push(...(page.TableNames ?? []));
  await mapBounded(names, ctx.width, (name) => addTable(ctx, client, name));
}

async function addTable(ctx: CollectContext, client: DynamoDBClient, name: string) {
  const { out, region } = ctx;
  // A table deleted between the listing and this call is simply gone; one we may not describe is
  // still there, with what the listing says (its name).
  const described = await tolerate(client.send(new DescribeTableCommand({ TableName: name }), ctx.send), [
    'ResourceNotFoundException',
  ]);
  if (!described.ok && !described.denied) return;
  const t = described.ok ? described.value.Table : undefined;
  const arn = t?.TableArn ?? `arn:${out.partition}:dynamodb:${region}:${out.accountId}:table/${name}`;
  const [backups, tagged] = await Promise.all([
    tolerate(client.send(new DescribeContinuousBackupsCommand({ TableName: name }), ctx.send), [
      'TableNotFoundException',
    ]),
    tolerate(listTags(ctx, client, arn), ['ResourceNotFoundException']),
  ]);
  const cb = backups.ok ? backups.value.ContinuousBackupsDescription : undefined;
  const tags = tagged.ok ? tagged.value : {};
  out.add({
    type: 'aws_dynamodb_table',
    arn,
    nativeId: name,
    region,
    name: tags.Name ?? name,
    tags,
    attributes: {
      name,
      table_arn: arn,
      table_id: orNull(t?.TableId),
      table_status: orNull(t?.TableStatus),
      // Tables created before on-demand existed have no BillingModeSummary: they are provisioned.
      billing_mode: t ? (t.BillingModeSummary?.BillingMode ?? 'PROVISIONED') : null,
      read_capacity: orNull(t?.ProvisionedThroughput?.ReadCapacityUnits),
      write_capacity: orNull(t?.ProvisionedThroughput?.WriteCapacityUnits),
      item_count: orNull(t?.ItemCount),
      table_size_bytes: orNull(t?.TableSizeBytes),
      table_class: orNull(t?.TableClassSummary?.TableClass),
      deletion_protection_enabled: orNull(t?.DeletionProtectionEnabled),
      key_schema: snakeList(t?.KeySchema),
      global_secondary_indexes: snakeList(t?.GlobalSecondaryIndexes),
      sse_description: snake(t?.SSEDescription),
      stream_specification: snake(t?.StreamSpecification),
      replicas: snakeList(t?.Replicas),
      creation_date_time: iso(t?.CreationDateTime),
      continuous_backups_status: orNull(cb?.ContinuousBackupsStatus),
      // {point_in_time_recovery_status: 'ENABLED'|'DISABLED', ...}; null when it could not be read.
      point_in_time_recovery_description: snake(cb?.PointInTimeRecoveryDescription),
      unreadable: [
        ...(described.ok ? [] : ['DescribeTable']),
        ...(backups.ok ? [] : ['DescribeContinuousBackups']),
        ...(tagged.ok ? [] : ['ListTagsOfResource']),
      ],
    },
  });
}

/** ListTagsOfResource has a NextToken but no SDK paginator, so the loop is written out. */
async function listTags(
  ctx: CollectContext,
  client: DynamoDBClient,
  arn: string,
): Promise<Record<string, string>> {
  const tags: Record<string, string> = {};
  let NextToken: string | undefined;
  do {
    const res = await client.send(new ListTagsOfResourceCommand({ ResourceArn: arn, NextToken }), ctx.send);
    Object.assign(tags, tagRecord(res.Tags));
    NextToken = res.NextToken;
  } while (NextToken);
  return tags;
}
