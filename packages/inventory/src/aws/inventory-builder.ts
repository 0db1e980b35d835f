import type { EdgeKind, InventoryEdge, InventoryResource, ResourceType } from '../model';

export interface ResourceInput {
  type: ResourceType;
  arn: string;
  nativeId: string;
  region: string;
  availabilityZone?: string | null | undefined;
  name?: string | null | undefined;
  tags?: Record<string, string>;
  attributes: Record<string, unknown>;
  size?: readonly [number, 'GiB' | 'vCPU' | 'IOPS'] | null | undefined;
}

/** Collects one account's resources and edges as the service collectors find them. */
export class InventoryBuilder {
  private readonly resources = new Map<string, InventoryResource>();
  private readonly edges = new Map<string, InventoryEdge>();
  /** `type|region|nativeId` → arn, for edges stated by id (alarm dimensions, route targets). */
  private readonly byNativeId = new Map<string, string>();

  constructor(
    readonly accountId: string,
    readonly partition: string,
  ) {}

  /** Adds a resource; the first one seen under an ARN wins (multi-region trails appear in every region). */
  add(input: ResourceInput): InventoryResource {
    const seen = this.resources.get(input.arn);
    if (seen) return seen;
    const r: InventoryResource = {
      type: input.type,
      arn: input.arn,
      nativeId: input.nativeId,
      accountId: this.accountId,
      region: input.region,
      availabilityZone: input.availabilityZone ?? null,
      name: input.name ?? input.tags?.Name ?? null,
      tags: input.tags ?? {},
      attributes: input.attributes,
      sizeValue: input.size?.[0] ?? null,
      sizeUnit: input.size?.[1] ?? null,
    };
    this.resources.set(r.arn, r);
    this.byNativeId.set(`${r.type}|${r.region}|${r.nativeId}`, r.arn);
    return r;
  }

  /** A stated relation (source 'config', confidence 1). Edges to resources never collected are dropped in `finish`. */
  link(from: string | null | undefined, to: string | null | undefined, kind: EdgeKind): void {
    if (!from || !to || from === to) return;
    this.edges.set(`${from}|${to}|${kind}`, { from, to, kind, source: 'config', confidence: 1 });
  }

  get(arn: string): InventoryResource | undefined {
    return this.resources.get(arn);
  }

  arnOf(type: ResourceType, region: string, nativeId: string | null | undefined): string | undefined {
    return nativeId ? this.byNativeId.get(`${type}|${region}|${nativeId}`) : undefined;
  }

  ofType(type: ResourceType): InventoryResource[] {
    return [...this.resources.values()].filter((r) => r.type === type);
  }

  // ----- ARNs, as AWS writes them, for APIs that return none -----

  ec2Arn(region: string, kind: string, id: string | null | undefined): string | null {
    return id ? `arn:${this.partition}:ec2:${region}:${this.accountId}:${kind}/${id}` : null;
  }

  /** EBS snapshot ARNs carry no account id. */
  snapshotArn(region: string, id: string): string {
    return `arn:${this.partition}:ec2:${region}::snapshot/${id}`;
  }

  rdsArn(region: string, kind: 'db' | 'snapshot', id: string | null | undefined): string | null {
    return id ? `arn:${this.partition}:rds:${region}:${this.accountId}:${kind}:${id}` : null;
  }

  elbArn(region: string, resource: string): string {
    return `arn:${this.partition}:elasticloadbalancing:${region}:${this.accountId}:${resource}`;
  }

  s3Arn(bucket: string): string {
    return `arn:${this.partition}:s3:::${bucket}`;
  }

  accountArn(): string {
    return `arn:${this.partition}:::${this.accountId}`;
  }

  /** Everything collected, with edges whose ends were both collected. */
  finish(): { resources: InventoryResource[]; edges: InventoryEdge[] } {
    const edges = [...this.edges.values()].filter(
      (e) => this.resources.has(e.from) && this.resources.has(e.to),
    );
    return { resources: [...this.resources.values()], edges };
  }
}
