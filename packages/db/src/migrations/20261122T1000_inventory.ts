import { sql, type Kysely } from 'kysely';

// Frozen once merged. One statement per call (PGlite).

// us-east-1 list prices from shared/reference/domain-notes.md §6.5 (Infracost goldens, AWS blogs);
// us-west-2 lists the same prices for these SKUs (the reference's own gp3 golden is us-west-2).
// 730 hours a month. Nothing here is invented: types without a sourced price stay unpriced.
const PRICES: Array<[sku: string, unit: string, usd: number, source: string]> = [
  ['ebs:gp2:gb_month', 'GB-month', 0.1, 'infracost ebs_volume_test.golden'],
  ['ebs:gp3:gb_month', 'GB-month', 0.08, 'infracost ebs_volume_test.golden'],
  ['ebs:gp3:iops_month', 'IOPS-month above 3000', 0.005, 'infracost ebs_volume_test.golden'],
  ['ebs:gp3:mibps_month', 'MiBps-month above 125', 0.04, 'infracost ebs_volume_test.golden'],
  ['ebs:io1:gb_month', 'GB-month', 0.125, 'infracost ebs_volume_test.golden'],
  ['ebs:io1:iops_month', 'IOPS-month', 0.065, 'infracost ebs_volume_test.golden'],
  ['ebs:io2:gb_month', 'GB-month', 0.125, 'infracost ebs_volume_test.golden'],
  ['ebs:io2:iops_month', 'IOPS-month', 0.065, 'infracost ebs_volume_test.golden'],
  ['ebs:st1:gb_month', 'GB-month', 0.045, 'infracost ebs_volume_test.golden'],
  ['ebs:sc1:gb_month', 'GB-month', 0.015, 'infracost ebs_volume_test.golden'],
  ['ebs:standard:gb_month', 'GB-month', 0.05, 'infracost ebs_volume_test.golden'],
  ['ebs:snapshot:gb_month', 'GB-month', 0.05, 'infracost ebs_snapshot_test.golden'],
  ['ec2:public_ipv4:hour', 'hour', 0.005, 'AWS blog: public IPv4 address charge (2024-02-01)'],
  ['vpc:nat_gateway:hour', 'hour', 0.045, 'infracost eip_test.golden'],
  ['vpc:nat_gateway:gb', 'GB processed', 0.045, 'infracost eip_test.golden'],
  ['elb:application:hour', 'hour', 0.0225, 'infracost lb_test.golden'],
  ['elb:network:hour', 'hour', 0.0225, 'infracost eip_test.golden'],
  ['elb:classic:hour', 'hour', 0.025, 'infracost goldens'],
  ['ec2:t3.micro:hour', 'hour', 0.0104, 'infracost autoscaling_group_test.golden'],
  ['ec2:t3.medium:hour', 'hour', 0.0416, 'infracost instance_test.golden'],
  ['ec2:t3.large:hour', 'hour', 0.0832, 'infracost instance_test.golden'],
  ['ec2:t2.medium:hour', 'hour', 0.0464, 'infracost instance_test.golden'],
  ['ec2:m5.large:hour', 'hour', 0.096, 'infracost eks_node_group_test.golden'],
  ['ec2:m5.xlarge:hour', 'hour', 0.192, 'infracost golden (2,190 h = $420.48)'],
  ['ec2:m5.4xlarge:hour', 'hour', 0.768, 'infracost diff_terraform_plan_json goldens'],
  ['rds:mysql:db.t3.large:single:hour', 'hour', 0.136, 'infracost db_instance_test.golden'],
  ['rds:mysql:db.t3.large:multi:hour', 'hour', 0.272, 'infracost db_instance_test.golden'],
  ['rds:mysql:db.m5.large:single:hour', 'hour', 0.171, 'infracost db_instance_test.golden'],
  // Multi-AZ doubles the instance price, as the db.t3.large pair of the same golden shows.
  [
    'rds:mysql:db.m5.large:multi:hour',
    'hour',
    0.342,
    '2x single-AZ (infracost db_instance_test.golden db.t3.large pair)',
  ],
  ['rds:storage:gp2:single:gb_month', 'GB-month', 0.115, 'infracost db_instance_test.golden'],
  ['rds:storage:gp2:multi:gb_month', 'GB-month', 0.23, 'infracost db_instance_test.golden'],
  ['cloudwatch:alarm:month', 'alarm-month', 0.1, 'infracost cloudwatch_metric_alarm_test.golden'],
  ['s3:standard:gb_month', 'GB-month', 0.023, 'infracost s3_bucket_test.golden'],
];

const statements = [
  sql`create table cloud_connections (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null unique references tenants(id),
    kind text not null check (kind in ('demo', 'terraform_state', 'aws')),
    config jsonb not null default '{}'::jsonb,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  // A demo environment is a pure function of (seed, size, epoch, day, applied commands): its state.
  sql`create table demo_environments (
    tenant_id uuid primary key references tenants(id),
    seed integer not null,
    size text not null check (size in ('small', 'medium', 'large')),
    epoch date not null,
    day integer not null default 0 check (day >= 0),
    commands jsonb not null default '[]'::jsonb,
    updated_at timestamptz not null default now()
  )`,
  sql`create table inventory_scans (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    connection_id uuid not null references cloud_connections(id),
    status text not null default 'queued' check (status in ('queued', 'running', 'completed', 'failed')),
    phase text not null default 'queued',
    counts jsonb not null default '{}'::jsonb,
    error text,
    snapshot_id uuid,
    requested_by text not null default 'operator',
    created_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz
  )`,
  sql`create index inventory_scans_tenant on inventory_scans (tenant_id, created_at desc)`,
  sql`create table inventory_snapshots (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    connection_id uuid not null references cloud_connections(id),
    scan_id uuid references inventory_scans(id),
    observed_at timestamptz not null,
    taken_at timestamptz not null default now(),
    resource_count integer not null,
    edge_count integer not null,
    created_count integer not null default 0,
    updated_count integer not null default 0,
    deleted_count integer not null default 0
  )`,
  sql`create index inventory_snapshots_tenant on inventory_snapshots (tenant_id, observed_at desc)`,
  sql`create table resources (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid not null references tenants(id),
    connection_id uuid not null references cloud_connections(id),
    arn text not null,
    type text not null,
    native_id text not null,
    account_id text not null,
    region text not null,
    availability_zone text,
    name text,
    tags jsonb not null default '{}'::jsonb,
    attributes jsonb not null default '{}'::jsonb,
    size_value numeric,
    size_unit text,
    monthly_cost numeric(14, 2),
    console_url text,
    content_hash text not null,
    first_seen timestamptz not null,
    last_seen timestamptz not null,
    snapshot_id uuid not null,
    deleted_at timestamptz,
    unique (tenant_id, arn)
  )`,
  sql`create index resources_type on resources (tenant_id, type) where deleted_at is null`,
  sql`create index resources_native on resources (tenant_id, native_id)`,
  sql`create table resource_edges (
    tenant_id uuid not null references tenants(id),
    from_arn text not null,
    to_arn text not null,
    kind text not null,
    source text not null,
    confidence real not null default 1 check (confidence > 0 and confidence <= 1),
    first_seen timestamptz not null,
    last_seen timestamptz not null,
    snapshot_id uuid not null,
    primary key (tenant_id, from_arn, to_arn, kind)
  )`,
  sql`create index resource_edges_to on resource_edges (tenant_id, to_arn)`,
  sql`create table resource_history (
    id bigserial primary key,
    tenant_id uuid not null references tenants(id),
    arn text not null,
    type text not null,
    snapshot_id uuid not null references inventory_snapshots(id),
    observed_at timestamptz not null,
    change text not null check (change in ('created', 'updated', 'deleted')),
    changed_fields text[] not null default '{}',
    before jsonb,
    after jsonb
  )`,
  sql`create index resource_history_arn on resource_history (tenant_id, arn, observed_at)`,
  sql`create index resource_history_snapshot on resource_history (snapshot_id)`,
  sql`create table metrics_daily (
    tenant_id uuid not null references tenants(id),
    arn text not null,
    metric text not null,
    day date not null,
    avg double precision,
    max double precision,
    sum double precision,
    primary key (tenant_id, arn, metric, day)
  )`,
  sql`create table cost_daily (
    tenant_id uuid not null references tenants(id),
    arn text not null,
    day date not null,
    product_code text not null,
    usage_type text not null,
    unblended_cost numeric(14, 6) not null,
    primary key (tenant_id, arn, day, usage_type)
  )`,
  sql`create table inventory_events (
    id bigserial primary key,
    tenant_id uuid not null references tenants(id),
    kind text not null check (kind in ('cloudtrail', 'alert')),
    at timestamptz not null,
    name text not null,
    actor text,
    source_ip text,
    fingerprint text,
    severity text,
    service text,
    arns text[] not null default '{}',
    payload jsonb not null default '{}'::jsonb,
    dedupe_key text not null,
    unique (tenant_id, dedupe_key)
  )`,
  sql`create index inventory_events_at on inventory_events (tenant_id, at desc)`,
  sql`create table prices (
    region text not null,
    sku text not null,
    unit text not null,
    usd numeric(14, 6) not null,
    source text not null,
    primary key (region, sku)
  )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await statement.execute(db);
  for (const region of ['us-east-1', 'us-west-2']) {
    for (const [sku, unit, usd, source] of PRICES) {
      await sql`insert into prices (region, sku, unit, usd, source) values (${region}, ${sku}, ${unit}, ${usd}, ${source})`.execute(
        db,
      );
    }
  }
}
