import type { EdgeKind, InventoryResource, ResourceType } from '../model';
import { parseArn, regionOfZone, str, tagsOf, type Values } from './values';

/** One managed resource instance of the state, flattened out of its module. */
export interface TfRow {
  /** Full instance address: `module.network.aws_subnet.private["us-east-1a"]`. */
  address: string;
  /** The address without instance keys, as `depends_on` names it: `module.network.aws_subnet.private`. */
  configAddress: string;
  /** `module.network` (instance keys dropped), '' for the root module. */
  modulePath: string;
  type: string;
  values: Values;
  dependsOn: string[];
  /** Marked tainted: it exists, and the next apply replaces it. */
  tainted?: boolean;
}

/** A resource looked up by its type and AWS id, or by its ARN. */
export type Target = { type: ResourceType; id: string } | { arn: string };

export interface ArnParts {
  partition: string;
  region: string;
  account: string;
}

/** A resource being built: its ARN, region and zone are settled once every resource is known. */
export interface Draft {
  /** The state row it comes from (for a root volume, its instance's). */
  row: TfRow;
  /** Made from a block of another resource (an instance's root volume), not a resource of its own. */
  derived: boolean;
  address: string;
  configAddress: string;
  type: ResourceType;
  nativeId: string;
  name: string | null;
  tags: Record<string, string>;
  attributes: Record<string, unknown>;
  sizeValue: number | null;
  sizeUnit: InventoryResource['sizeUnit'];
  /** The ARN the state records, when it has one. */
  arn: string | null;
  /** How to build the ARN in the AWS format when the state has none. */
  buildArn: (p: ArnParts) => string;
  /** IAM, Route 53: no region. */
  global: boolean;
  region: string | null;
  availabilityZone: string | null;
  /** Where to take the region (and, with zone, the AZ) from when the resource's own values lack them. */
  placeFrom: { target: Target; zone: boolean }[];
}

export interface PendingEdge {
  from: Draft | Target;
  kind: EdgeKind;
  to: Draft | Target;
}

export const isDraft = (x: Draft | Target): x is Draft => 'row' in x;

/** A reference worth keeping: a draft, or a target with a non-empty id or ARN. */
const isSet = (x: Draft | Target | null | undefined): x is Draft | Target =>
  !!x && (isDraft(x) || ('arn' in x ? !!x.arn : !!x.id));

export interface DraftInit {
  nativeId: string;
  /** The name AWS gives it (bucket, role, identifier...), used when there is no Name tag. */
  naturalName?: string | null;
  attributes: Record<string, unknown>;
  buildArn: (p: ArnParts) => string;
  availabilityZone?: string | null;
  global?: boolean;
  sizeValue?: number | null;
  sizeUnit?: InventoryResource['sizeUnit'];
  tags?: Record<string, string>;
  /** Overrides the row's address (resources derived from a block of another one). */
  address?: string;
}

/** Collects drafts and the references between them while the state's resources are mapped. */
export class Registry {
  readonly drafts: Draft[] = [];
  readonly edges: PendingEdge[] = [];
  /** Fix-ups that need every resource mapped and every ARN settled (names and ARNs of referenced ones). */
  readonly afterwards: (() => void)[] = [];
  private readonly byKey = new Map<string, Draft>();

  /** Creates and registers the draft of a row; the first resource of a type and id wins. */
  add(row: TfRow, type: ResourceType, init: DraftInit): Draft {
    const v = row.values;
    const tags = init.tags ?? tagsOf(v);
    const arn = init.address ? null : str(v.arn);
    const az = init.availabilityZone ?? null;
    const draft: Draft = {
      row,
      derived: init.address !== undefined,
      address: init.address ?? row.address,
      configAddress: row.configAddress,
      type,
      nativeId: init.nativeId,
      name: tags.Name ?? init.naturalName ?? null,
      tags,
      attributes: init.attributes,
      sizeValue: init.sizeValue ?? null,
      sizeUnit: init.sizeValue == null ? null : (init.sizeUnit ?? null),
      arn,
      buildArn: init.buildArn,
      global: init.global ?? false,
      region: init.global ? 'global' : (str(v.region) ?? (parseArn(arn)?.region || null) ?? regionOfZone(az)),
      availabilityZone: az,
      placeFrom: [],
    };
    this.drafts.push(draft);
    const key = `${type}|${init.nativeId}`;
    if (!this.byKey.has(key)) this.byKey.set(key, draft);
    return draft;
  }

  get(type: ResourceType, id: string | null | undefined): Draft | undefined {
    return id ? this.byKey.get(`${type}|${id}`) : undefined;
  }

  /** Records a reference; it becomes an edge when the target is among the imported resources. */
  link(from: Draft | Target, kind: EdgeKind, to: Draft | Target | null | undefined): void {
    if (isSet(from) && isSet(to)) this.edges.push({ from, kind, to });
  }

  /** The draft whose stated ARN this is (load balancers and target groups are referenced by ARN). */
  byStatedArn(arn: string | null | undefined): Draft | undefined {
    return arn ? this.drafts.find((d) => d.arn === arn) : undefined;
  }

  after(fn: () => void): void {
    this.afterwards.push(fn);
  }

  /** Records where a draft without its own region or AZ can take them from. */
  placeBy(draft: Draft, target: Target | null, zone: boolean): void {
    if (isSet(target)) draft.placeFrom.push({ target, zone });
  }
}

/** Builds an ARN, leaving region or account empty where the service's ARNs have none. */
export const arnOf =
  (service: string, resource: string, scope: 'regional' | 'global' | 'bare' = 'regional') =>
  (p: ArnParts): string => {
    const region = scope === 'regional' ? p.region : '';
    const account = scope === 'bare' ? '' : p.account;
    return `arn:${p.partition}:${service}:${region}:${account}:${resource}`;
  };

/** `/` → ``, `/service-role/` → `service-role/`: the path part of an IAM ARN. */
export const iamPath = (path: unknown): string => (str(path) ?? '/').replace(/^\//, '');

/** The resource's AWS id: a named attribute, else `id`, else (ids unknown) its address. */
export const idOf = (row: TfRow, key = 'id'): string =>
  str(row.values[key]) ?? str(row.values.id) ?? row.address;
