import { createHash } from 'node:crypto';
import type { Db } from '@opsi/db';
import { monthlyCost, PriceBook, type InventoryResource, type ResourceType } from '@opsi/inventory';
import { appendAudit } from '../audit';
import type { Auth } from '../context';
import { Forbidden } from '../errors';
import { allowsStarStar, CONDITIONS } from './conditions';
import { failedPlanChecks, planAttachments } from './plan-checks';
import {
  findDependents,
  findGroupsInUse,
  findLastChanges,
  findLatestSnapshots,
  findLiveCandidates,
  findOpenFindings,
  type Dependent,
  type LiveResource,
  type OpenFinding,
} from './live';
import { DEFAULT_PARSE_LIMITS, parsePlanOffThread, type ParseLimits } from './parse-pool';
import type { ParsedPlan, PlanDrift, PlanResourceChange } from './plan';
import { applyDelta, isRuleType, shapeValues, type Shaped } from './shape';

export type Risk = 'low' | 'medium' | 'high' | 'critical';
const RISK_RANK: Record<Risk, number> = { low: 1, medium: 2, high: 3, critical: 4 };

export interface Citation {
  kind: 'plan_line' | 'resource' | 'finding';
  ref: string;
}

export interface Annotation {
  risk: Risk;
  category: 'destructive' | 'security' | 'iam' | 'reliability' | 'cost' | 'drift' | 'fixes' | 'unmatched';
  address: string;
  title: string;
  detail: string;
  citations: Citation[];
}

export interface ReviewedResource {
  address: string;
  action: PlanResourceChange['action'];
  replace_order: PlanResourceChange['replaceOrder'];
  reason: string | null;
  replace_paths: string[];
  moved_from: string | null;
  importing: string | null;
  plan_ref: string;
  live: null | {
    id: string;
    arn: string;
    type: string;
    native_id: string;
    name: string | null;
    matched_by: 'terraform_address' | 'arn' | 'native_id' | 'name' | 'name_tag';
  };
  protection: null | {
    deletion_protection: boolean | null;
    multi_az: boolean | null;
    backup_retention_days: number | null;
    latest_snapshot_at: string | null;
  };
  dependents: null | { total: number; by_depth: Record<string, number>; items: Dependent[] };
  monthly_cost_before: number | null;
  monthly_cost_after: number | null;
}

export interface PlanReview {
  overall_risk: Risk;
  read_only: true;
  plan_digest: string;
  format: ParsedPlan['format'];
  terraform_version: string | null;
  summary: {
    add: number;
    change: number;
    destroy: number;
    replace: number;
    read: number;
    import: number;
    move: number;
    forget: number;
    drift: number;
    terraform_summary: ParsedPlan['summaryLine'];
  };
  cost: { monthly_delta: number; currency: 'USD'; priced: number; unpriced: string[] };
  findings: {
    fixes: Array<{
      finding_id: string;
      check_id: string;
      title: string;
      severity: string;
      address: string;
      arn: string;
      how: 'changed' | 'removed';
    }>;
    introduces: Array<{
      check_id: string;
      title: string;
      severity: string;
      address: string;
      arn: string | null;
    }>;
  };
  resources: ReviewedResource[];
  annotations: Annotation[];
  warnings: string[];
}

const STATEFUL = new Set([
  'aws_rds_db_instance',
  'aws_ebs_volume',
  'aws_s3_bucket',
  'aws_dynamodb_table',
  'aws_elasticache_replication_group',
  'aws_ebs_snapshot',
  'aws_rds_db_snapshot',
]);
const NETWORK_PATH = new Set([
  'aws_vpc_nat_gateway',
  'aws_vpc_internet_gateway',
  'aws_vpc_route_table',
  'aws_vpc_subnet',
  'aws_vpc',
  'aws_ec2_application_load_balancer',
  'aws_ec2_target_group',
  'aws_route53_record',
]);
const IAM_TYPES = /^aws_iam_/;
/** Types AWS does not bill for by themselves (their members and traffic are billed elsewhere). */
const FREE_TYPES = new Set([
  'aws_vpc',
  'aws_vpc_subnet',
  'aws_vpc_route_table',
  'aws_vpc_internet_gateway',
  'aws_vpc_security_group',
  'aws_ec2_launch_template',
  'aws_ec2_target_group',
  'aws_ec2_autoscaling_group',
  'aws_iam_user',
  'aws_iam_access_key',
  'aws_iam_role',
  'aws_iam_policy',
  'aws_iam_instance_profile',
]);

const round2 = (n: number) => Math.round(n * 100) / 100;
const money = (n: number) => `${n < 0 ? '-' : '+'}$${Math.abs(n).toFixed(2)}`;
const maxRisk = (a: Risk, b: Risk): Risk => (RISK_RANK[a] >= RISK_RANK[b] ? a : b);

function planRef(source: PlanResourceChange['source'] | PlanDrift['source']): string {
  return source.kind === 'text'
    ? source.lines.start === source.lines.end
      ? `L${source.lines.start}`
      : `L${source.lines.start}-L${source.lines.end}`
    : source.pointer;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Keys that can name the plan object among live resources. */
function keysOf(change: PlanResourceChange, shaped: Shaped | undefined) {
  const values = { ...(change.after ?? {}), ...(change.before ?? {}) };
  const tags = (values.tags ?? values.tags_all ?? {}) as Record<string, unknown>;
  return {
    address: change.address,
    movedFrom: change.movedFrom,
    arn: str(values.arn),
    id: shaped?.nativeId ?? str(values.id),
    name: shaped?.name ?? str(values.identifier) ?? str(values.bucket) ?? str(values.name),
    nameTag: str(tags.Name),
    type: shaped?.type ?? null,
  };
}

type MatchedBy = NonNullable<ReviewedResource['live']>['matched_by'];

function matchLive(
  keys: ReturnType<typeof keysOf>,
  index: {
    byAddress: Map<string, LiveResource>;
    byArn: Map<string, LiveResource>;
    byId: Map<string, LiveResource[]>;
    byName: Map<string, LiveResource[]>;
  },
): { live: LiveResource; by: MatchedBy } | null {
  const typed = (list: LiveResource[] | undefined) =>
    (list ?? []).find((r) => (keys.type ? r.type === keys.type : true));
  const byAddress =
    index.byAddress.get(keys.address) ?? (keys.movedFrom ? index.byAddress.get(keys.movedFrom) : undefined);
  if (byAddress) return { live: byAddress, by: 'terraform_address' };
  if (keys.arn) {
    const r = index.byArn.get(keys.arn);
    if (r) return { live: r, by: 'arn' };
  }
  if (keys.type && keys.id) {
    const r = typed(index.byId.get(keys.id));
    if (r) return { live: r, by: 'native_id' };
  }
  if (keys.type && keys.name) {
    const r = typed(index.byName.get(keys.name));
    if (r) return { live: r, by: 'name' };
  }
  if (keys.type && keys.nameTag) {
    const r = typed(index.byName.get(keys.nameTag));
    if (r) return { live: r, by: 'name_tag' };
  }
  return null;
}

function costOf(book: PriceBook, type: string, region: string, attributes: Record<string, unknown>) {
  return FREE_TYPES.has(type) ? 0 : monthlyCost(asInventory(type, region, attributes), book);
}

function asInventory(type: string, region: string, attributes: Record<string, unknown>): InventoryResource {
  return {
    type: type as ResourceType,
    arn: '',
    nativeId: '',
    accountId: '',
    region,
    availabilityZone: null,
    name: null,
    tags: {},
    attributes,
    sizeValue: null,
    sizeUnit: null,
  };
}

/**
 * Reviews a Terraform plan against the tenant's live environment: each address joined to its live
 * resource, dependents and protection of what is destroyed or replaced, drift the plan would revert,
 * findings it fixes or introduces (the detectors' conditions on the planned after-state), and the
 * monthly cost delta at list prices. Read-only: nothing is stored but an audit entry.
 */
export async function reviewPlan(
  db: Db,
  auth: Auth,
  plan: string,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): Promise<PlanReview> {
  if (auth.tenant.tier === 'free')
    throw new Forbidden('Plan review needs API access, which the free tier does not include.');
  // Off the event loop: a worker thread with a time and a memory limit (parse-pool.ts).
  const parsed = await parsePlanOffThread(plan, limits);
  const review = await reviewParsedPlan(db, auth.tenant.id, parsed);
  review.plan_digest = `sha256:${createHash('sha256').update(plan).digest('hex')}`;
  await db.transaction().execute((tx) =>
    appendAudit(tx, auth.tenant.id, {
      actor: {
        type: 'user',
        id: auth.user.id,
        email: auth.user.email,
        token_id: auth.kind === 'token' ? auth.token.id : null,
      },
      action: 'plan_review.reviewed',
      target_type: 'plan',
      target_id: review.plan_digest,
      details: {
        overall_risk: review.overall_risk,
        format: review.format,
        summary: { add: review.summary.add, change: review.summary.change, destroy: review.summary.destroy },
        annotations: review.annotations.length,
      },
    }),
  );
  return review;
}

/** The review of an already parsed plan (no tier check, no audit): the part the bench measures. */
export async function reviewParsedPlan(db: Db, tenantId: string, parsed: ParsedPlan): Promise<PlanReview> {
  const changes = parsed.changes.filter((c) => c.mode === 'managed' || c.action === 'read');
  // Separate resources that carry a setting for another (bucket logging, VPC flow logs), plan-wide.
  const attachedBefore = planAttachments(parsed.changes, 'before');
  const attachedAfter = planAttachments(parsed.changes, 'after');
  const managed = changes.filter((c) => c.mode === 'managed');

  // Shape before and after values in the inventory's vocabulary.
  const shapedBefore = shapeValues(
    managed.filter((c) => c.before).map((c) => ({ key: c.address, change: c, values: c.before! })),
  );
  const shapedAfter = shapeValues(
    managed.filter((c) => c.after).map((c) => ({ key: c.address, change: c, values: c.after! })),
  );

  // Candidates among live resources, in one query.
  const keyList = managed.map((c) => ({
    change: c,
    keys: keysOf(c, shapedBefore.get(c.address) ?? shapedAfter.get(c.address)),
  }));
  const groupIds = managed
    .filter((c) => isRuleType(c.type))
    .map((c) => str((c.after ?? c.before ?? {}).security_group_id))
    .filter((x): x is string => !!x);
  const candidates = await findLiveCandidates(db, tenantId, {
    addresses: keyList.flatMap((k) => [k.keys.address, ...(k.keys.movedFrom ? [k.keys.movedFrom] : [])]),
    arns: keyList.map((k) => k.keys.arn).filter((x): x is string => !!x),
    ids: [...keyList.map((k) => k.keys.id).filter((x): x is string => !!x), ...groupIds],
    names: keyList.flatMap((k) => [k.keys.name, k.keys.nameTag]).filter((x): x is string => !!x),
  });
  const index = {
    byAddress: new Map<string, LiveResource>(),
    byArn: new Map<string, LiveResource>(),
    byId: new Map<string, LiveResource[]>(),
    byName: new Map<string, LiveResource[]>(),
  };
  for (const r of candidates) {
    const address = r.attributes.terraform_address;
    if (typeof address === 'string') index.byAddress.set(address, r);
    index.byArn.set(r.arn, r);
    index.byId.set(r.native_id, [...(index.byId.get(r.native_id) ?? []), r]);
    if (r.name) index.byName.set(r.name, [...(index.byName.get(r.name) ?? []), r]);
  }

  const matches = new Map<string, { live: LiveResource; by: MatchedBy }>();
  for (const { change, keys } of keyList) {
    if (isRuleType(change.type)) {
      const groupId = str((change.after ?? change.before ?? {}).security_group_id);
      const group = groupId
        ? (index.byId.get(groupId) ?? []).find((r) => r.type === 'aws_vpc_security_group')
        : undefined;
      if (group) matches.set(change.address, { live: group, by: 'native_id' });
      continue;
    }
    if (change.action === 'create' && !change.importing) continue;
    const m = matchLive(keys, index);
    if (m) matches.set(change.address, m);
  }

  const liveArns = [...new Set([...matches.values()].map((m) => m.live.arn))];
  const removedArns = managed
    .filter((c) => (c.action === 'delete' || c.action === 'replace') && !isRuleType(c.type))
    .map((c) => matches.get(c.address)?.live.arn)
    .filter((x): x is string => !!x);
  const sgIds = [...matches.values()]
    .filter((m) => m.live.type === 'aws_vpc_security_group')
    .map((m) => m.live.native_id);
  const [dependents, openFindings, groupsInUse, lastChanges, book] = await Promise.all([
    findDependents(db, tenantId, removedArns),
    findOpenFindings(db, tenantId, liveArns),
    findGroupsInUse(db, tenantId, sgIds),
    findLastChanges(db, tenantId, liveArns),
    PriceBook.load(db),
  ]);
  const snapshotSources = managed
    .map((c) => matches.get(c.address)?.live)
    .filter(
      (r): r is LiveResource => !!r && (r.type === 'aws_rds_db_instance' || r.type === 'aws_ebs_volume'),
    )
    .map((r) => r.native_id);
  const snapshots = await findLatestSnapshots(db, tenantId, snapshotSources);
  const findingsByArn = new Map<string, OpenFinding[]>();
  for (const f of openFindings) findingsByArn.set(f.arn, [...(findingsByArn.get(f.arn) ?? []), f]);
  const driftByAddress = new Map(parsed.drift.map((d) => [d.address, d]));

  const annotations: Annotation[] = [];
  const resources: ReviewedResource[] = [];
  const fixes: PlanReview['findings']['fixes'] = [];
  const introduces: PlanReview['findings']['introduces'] = [];
  let costDelta = 0;
  let priced = 0;
  const unpriced: string[] = [];
  const warnings: string[] = [...parsed.warnings.map((w) => `Terraform warned: ${w}`)];

  // Several rule resources may change one group: their after-state is the group with all of them.
  const groupAfter = new Map<string, Record<string, unknown>>();

  for (const change of changes) {
    const ref = planRef(change.source);
    const planCite: Citation = { kind: 'plan_line', ref };
    const match = matches.get(change.address) ?? null;
    const live = match?.live ?? null;
    const liveCite: Citation[] = live ? [{ kind: 'resource', ref: live.arn }] : [];
    const rule = isRuleType(change.type);
    const before = shapedBefore.get(change.address);
    const after = shapedAfter.get(change.address);
    const type = live?.type ?? after?.type ?? before?.type ?? null;
    const region = live?.region ?? after?.region ?? before?.region ?? 'us-east-1';

    const reviewed: ReviewedResource = {
      address: change.address,
      action: change.action,
      replace_order: change.replaceOrder,
      reason: change.reason,
      replace_paths: change.replacePaths.map((p) => p.join('.')),
      moved_from: change.movedFrom,
      importing: change.importing,
      plan_ref: ref,
      live: live
        ? {
            id: live.id,
            arn: live.arn,
            type: live.type,
            native_id: live.native_id,
            name: live.name,
            matched_by: match!.by,
          }
        : null,
      protection: null,
      dependents: null,
      monthly_cost_before: null,
      monthly_cost_after: null,
    };
    resources.push(reviewed);
    if (change.mode === 'data') continue;

    // ---- the after-state, in the inventory's vocabulary ----
    const removes = change.action === 'delete' || change.action === 'forget';
    let afterState: Record<string, unknown> | null = null;
    if (rule && live) {
      const base = groupAfter.get(live.arn) ?? live.attributes;
      afterState = applyDelta(
        base,
        (before?.attributes ?? { rules: [] }) as Record<string, unknown>,
        (removes ? { rules: [] } : (after?.attributes ?? { rules: [] })) as Record<string, unknown>,
      );
      groupAfter.set(live.arn, afterState);
    } else if (!removes && after) {
      afterState = live
        ? applyDelta(live.attributes, before?.attributes ?? null, after.attributes)
        : { ...after.attributes };
      if (change.action === 'create' && type === 'aws_ec2_instance' && !afterState.instance_state)
        afterState.instance_state = 'running';
    }

    // ---- cost ----
    if (!rule && change.action !== 'no-op' && change.action !== 'read' && change.action !== 'forget') {
      const costBefore =
        change.action === 'create'
          ? 0
          : (live?.monthly_cost ?? (before && type ? costOf(book, type, region, before.attributes) : null));
      const costAfter = removes ? 0 : afterState && type ? costOf(book, type, region, afterState) : null;
      reviewed.monthly_cost_before = costBefore;
      reviewed.monthly_cost_after = costAfter;
      if (costBefore !== null && costAfter !== null) {
        const delta = round2(costAfter - costBefore);
        costDelta += delta;
        priced++;
        if (delta !== 0) {
          const abs = Math.abs(delta);
          annotations.push({
            risk: delta > 0 ? (abs >= 1000 ? 'high' : abs >= 100 ? 'medium' : 'low') : 'low',
            category: 'cost',
            address: change.address,
            title: `${money(delta)}/month at list prices`,
            detail: `Monthly cost ${costBefore.toFixed(2)} → ${costAfter.toFixed(2)} USD (list prices for ${region}, 730 hours a month${live ? '; before = the live resource as inventoried' : ''}).`,
            citations: [planCite, ...liveCite],
          });
        }
      } else if (type) {
        unpriced.push(change.address);
      }
    }

    // ---- destroys and replacements: dependents and protection ----
    if ((change.action === 'delete' || change.action === 'replace') && !rule) {
      if (live) {
        const deps = dependents.get(live.arn) ?? [];
        const byDepth: Record<string, number> = {};
        for (const d of deps) byDepth[String(d.depth)] = (byDepth[String(d.depth)] ?? 0) + 1;
        reviewed.dependents = { total: deps.length, by_depth: byDepth, items: deps.slice(0, 50) };
        const a = live.attributes;
        const lbProtection = (a.load_balancer_attributes as Record<string, unknown> | undefined)?.[
          'deletion_protection.enabled'
        ];
        const deletionProtection =
          typeof a.deletion_protection === 'boolean'
            ? a.deletion_protection
            : typeof a.deletion_protection_enabled === 'boolean'
              ? a.deletion_protection_enabled
              : lbProtection === undefined
                ? null
                : String(lbProtection) === 'true';
        reviewed.protection = {
          deletion_protection: deletionProtection,
          multi_az: typeof a.multi_az === 'boolean' ? a.multi_az : null,
          backup_retention_days:
            a.backup_retention_period === undefined || a.backup_retention_period === null
              ? null
              : Number(a.backup_retention_period),
          latest_snapshot_at: snapshots.get(live.native_id) ?? null,
        };
        const stateful = STATEFUL.has(live.type);
        const network = NETWORK_PATH.has(live.type);
        const noBackups = reviewed.protection.backup_retention_days === 0;
        let risk: Risk = stateful || network ? 'high' : deps.length ? 'medium' : 'low';
        if (
          stateful &&
          (noBackups || deletionProtection === false) &&
          !reviewed.protection.latest_snapshot_at
        )
          risk = 'critical';
        if (deps.length >= 3 && (stateful || network)) risk = 'critical';
        if (change.action === 'replace' && change.replaceOrder === 'create_first' && !stateful)
          risk = RISK_RANK[risk] > RISK_RANK.medium ? 'medium' : risk;
        const facts: string[] = [];
        if (deps.length) {
          const depthText = Object.entries(byDepth)
            .map(([d, n]) => `${n} at depth ${d}`)
            .join(', ');
          facts.push(
            `${deps.length} live dependent${deps.length === 1 ? '' : 's'} (${depthText}): ${deps
              .slice(0, 8)
              .map((d) => d.name ?? d.native_id ?? d.arn)
              .join(', ')}${deps.length > 8 ? ', …' : ''}`,
          );
        } else facts.push('no live dependents in the graph');
        if (deletionProtection !== null)
          facts.push(
            deletionProtection
              ? 'deletion protection is on (the apply fails until it is turned off)'
              : 'deletion protection is off',
          );
        if (reviewed.protection.multi_az !== null)
          facts.push(reviewed.protection.multi_az ? 'Multi-AZ' : 'single-AZ');
        if (reviewed.protection.backup_retention_days !== null)
          facts.push(
            noBackups
              ? 'automated backups are off (retention 0)'
              : `automated backups kept ${reviewed.protection.backup_retention_days} days`,
          );
        if (stateful)
          facts.push(
            reviewed.protection.latest_snapshot_at
              ? `latest snapshot ${reviewed.protection.latest_snapshot_at}`
              : 'no snapshot in the inventory',
          );
        const verb =
          change.action === 'delete'
            ? 'destroys'
            : `replaces (${change.replaceOrder === 'create_first' ? 'creates the new one first' : 'destroys first, then creates'})`;
        const because = change.replacePaths.length
          ? `; forced by ${change.replacePaths.map((p) => p.join('.')).join(', ')}`
          : change.reason === 'replace_because_tainted'
            ? '; the object is tainted'
            : change.reason === 'replace_by_request'
              ? '; replacement was requested (-replace)'
              : '';
        annotations.push({
          risk,
          category: 'destructive',
          address: change.address,
          title: `${change.action === 'delete' ? 'Destroys' : 'Replaces'} ${live.name ?? live.native_id} (${live.type})`,
          detail: `The plan ${verb} ${live.arn}${because}. Live: ${facts.join('; ')}.`,
          citations: [
            planCite,
            ...liveCite,
            ...deps.slice(0, 20).map((d) => ({ kind: 'resource' as const, ref: d.arn })),
          ],
        });
      } else if (change.action === 'delete') {
        annotations.push({
          risk: 'medium',
          category: 'unmatched',
          address: change.address,
          title: 'Destroys an object not found in the live inventory',
          detail:
            'No live resource matches this address (Terraform address, ARN, id, name or Name tag): the inventory may be stale, or the object lives outside the connected environment.',
          citations: [planCite],
        });
      }
    }

    // ---- drift the plan reverts ----
    const drift = driftByAddress.get(change.address);
    if (drift && change.action !== 'no-op' && change.action !== 'read') {
      const last = live ? lastChanges.get(live.arn) : undefined;
      annotations.push({
        risk: 'medium',
        category: 'drift',
        address: change.address,
        title: 'Reverts a change made outside Terraform',
        detail: `Terraform found this object ${drift.change === 'delete' ? 'deleted' : 'changed'} outside Terraform, and the plan ${change.action === 'update' ? 'sets it back to the configuration' : `${change.action}s it`}.${last ? ` The last recorded change: ${last.name} by ${last.actor ?? 'an unknown principal'} at ${last.at.toISOString()}.` : ''} If that change was a deliberate hotfix, put it in the configuration before applying.`,
        citations: [planCite, { kind: 'plan_line', ref: planRef(drift.source) }, ...liveCite],
      });
    }

    // ---- findings fixed and introduced ----
    const target = live ?? null;
    const open = target ? (findingsByArn.get(target.arn) ?? []) : [];
    const sgInUse = target?.type === 'aws_vpc_security_group' ? groupsInUse.has(target.native_id) : false;
    const shapedAfterState =
      afterState && type ? { type, attributes: afterState, tags: after?.tags ?? live?.tags ?? {} } : null;
    const trueAfter = new Set(
      shapedAfterState
        ? CONDITIONS.filter((c) => c.type === type && c.test(shapedAfterState, { sgInUse })).map(
            (c) => c.checkId,
          )
        : [],
    );
    for (const f of open) {
      const known = CONDITIONS.some((c) => c.checkId === f.check_id && c.type === type);
      const gone = removes && !rule;
      if (gone || (known && afterState && !trueAfter.has(f.check_id))) {
        if (fixes.some((x) => x.finding_id === f.id)) continue;
        fixes.push({
          finding_id: f.id,
          check_id: f.check_id,
          title: f.title,
          severity: f.severity,
          address: change.address,
          arn: f.arn,
          how: gone ? 'removed' : 'changed',
        });
        annotations.push({
          risk: 'low',
          category: 'fixes',
          address: change.address,
          title: `${gone ? 'Removes the resource of' : 'Fixes'} an open finding: ${f.title}`,
          detail: gone
            ? `The finding (${f.check_id}) goes away with the resource; it is not fixed in place.`
            : `After this change the detector's condition (${f.check_id}) no longer holds for ${target!.name ?? target!.native_id}.`,
          citations: [planCite, { kind: 'finding', ref: f.id }, ...liveCite],
        });
      }
    }
    for (const checkId of trueAfter) {
      if (open.some((f) => f.check_id === checkId)) continue;
      // A rule changed by another resource of the plan: report the group once.
      if (introduces.some((x) => x.check_id === checkId && target && x.arn === target.arn)) continue;
      const c = CONDITIONS.find((x) => x.checkId === checkId)!;
      introduces.push({
        check_id: checkId,
        title: c.title,
        severity: c.severity,
        address: change.address,
        arn: target?.arn ?? null,
      });
      annotations.push({
        risk: c.severity,
        category: c.domain === 'security' ? 'security' : c.domain === 'sre' ? 'reliability' : 'cost',
        address: change.address,
        title: `Introduces: ${c.title}`,
        detail: `The detector ${checkId} would report ${target ? `${target.name ?? target.native_id} once this plan is applied` : 'the new object'}${rule ? ' (the rule applies to the live group)' : ''}.`,
        citations: [planCite, ...liveCite],
      });
    }

    // ---- IAM ----
    if (IAM_TYPES.test(change.type) && change.action !== 'no-op' && change.action !== 'read') {
      const values = change.after ?? {};
      const star = ['policy', 'inline_policy', 'assume_role_policy'].some((k) => {
        const v = values[k];
        return Array.isArray(v)
          ? v.some((x) => allowsStarStar((x as Record<string, unknown>)?.policy))
          : allowsStarStar(v);
      });
      const attachAdmin = String(values.policy_arn ?? '').endsWith('AdministratorAccess');
      if (star || attachAdmin) {
        introduces.push({
          check_id: 'security.iam_admin_star',
          title: 'Policy allows every action on every resource',
          severity: 'critical',
          address: change.address,
          arn: live?.arn ?? null,
        });
      }
      annotations.push({
        risk: star || attachAdmin ? 'critical' : change.action === 'delete' ? 'medium' : 'medium',
        category: 'iam',
        address: change.address,
        title: star
          ? 'Grants Action "*" on Resource "*"'
          : attachAdmin
            ? 'Attaches AdministratorAccess'
            : `Changes IAM (${change.type}, ${change.action})`,
        detail:
          star || attachAdmin
            ? 'A principal with this policy can do anything in the account (security.iam_admin_star).'
            : 'Privilege changes deserve a second reviewer; the live principals it affects are listed as citations when known.',
        citations: [planCite, ...liveCite],
      });
    }

    // ---- plan checks: Terraform's after-state, every type that carries the setting ----
    if (!removes && change.action !== 'read') {
      const complete = {
        complete: parsed.format === 'json' || change.action === 'create',
        attached: attachedAfter,
      };
      const failedBefore = new Set(
        failedPlanChecks(change.type, change.before, {
          complete: parsed.format === 'json',
          attached: attachedBefore,
        }).map((c) => c.checkId),
      );
      for (const c of failedPlanChecks(change.type, change.after, complete)) {
        // Already so before the plan, already an open finding, or already said above: not introduced here.
        if (failedBefore.has(c.checkId) || open.some((f) => f.check_id === c.checkId)) continue;
        if (introduces.some((x) => x.check_id === c.checkId && x.address === change.address)) continue;
        introduces.push({
          check_id: c.checkId,
          title: c.title,
          severity: c.severity,
          address: change.address,
          arn: live?.arn ?? null,
        });
        annotations.push({
          risk: c.severity,
          category: 'security',
          address: change.address,
          title: `Introduces: ${c.title}`,
          detail: `As the plan leaves it, ${change.address} fails the plan check ${c.checkId} (Checkov ${c.checkov.join(', ')}).`,
          citations: [planCite, ...liveCite],
        });
      }
    }

    if (
      !live &&
      change.action !== 'create' &&
      change.action !== 'read' &&
      change.action !== 'delete' &&
      !rule
    ) {
      annotations.push({
        risk: 'low',
        category: 'unmatched',
        address: change.address,
        title: 'Not found in the live inventory',
        detail:
          'No live resource matches this address (Terraform address, ARN, id, name or Name tag), so its live protection, dependents and findings are unknown.',
        citations: [planCite],
      });
    }
  }

  if (parsed.summaryLine) {
    const counted = countChanges(changes);
    if (
      counted.add !== parsed.summaryLine.add ||
      counted.change !== parsed.summaryLine.change ||
      counted.destroy !== parsed.summaryLine.destroy
    )
      warnings.push(
        `Terraform's summary says ${parsed.summaryLine.add} to add, ${parsed.summaryLine.change} to change, ${parsed.summaryLine.destroy} to destroy; the resources read here give ${counted.add}, ${counted.change}, ${counted.destroy}: part of the plan may be missing (truncated log?).`,
      );
  }

  annotations.sort(
    (a, b) =>
      RISK_RANK[b.risk] - RISK_RANK[a.risk] ||
      CATEGORY_ORDER.indexOf(a.category) - CATEGORY_ORDER.indexOf(b.category) ||
      a.address.localeCompare(b.address),
  );
  const overall = annotations.reduce<Risk>((r, a) => maxRisk(r, a.risk), 'low');
  return {
    overall_risk: overall,
    read_only: true,
    plan_digest: '',
    format: parsed.format,
    terraform_version: parsed.terraformVersion,
    summary: { ...countChanges(changes), drift: parsed.drift.length, terraform_summary: parsed.summaryLine },
    cost: { monthly_delta: round2(costDelta), currency: 'USD', priced, unpriced },
    findings: { fixes, introduces },
    resources,
    annotations,
    warnings,
  };
}

const CATEGORY_ORDER: Annotation['category'][] = [
  'destructive',
  'security',
  'iam',
  'reliability',
  'drift',
  'unmatched',
  'cost',
  'fixes',
];

function countChanges(changes: PlanResourceChange[]) {
  const n = (f: (c: PlanResourceChange) => boolean) => changes.filter(f).length;
  return {
    add: n((c) => c.action === 'create' || c.action === 'replace'),
    change: n((c) => c.action === 'update'),
    destroy: n((c) => c.action === 'delete' || c.action === 'replace'),
    replace: n((c) => c.action === 'replace'),
    read: n((c) => c.action === 'read'),
    import: n((c) => c.importing !== null),
    move: n((c) => c.movedFrom !== null),
    forget: n((c) => c.action === 'forget'),
  };
}
