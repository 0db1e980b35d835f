import { PLAN_LIMITS } from './limits';
import { addressParts, type ParsedPlan, type Path, type PlanAction, type PlanResourceChange } from './plan';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** How many path elements the unknown and sensitive lists of the plan being read may still take. */
let pathBudget = 0;

/**
 * Paths whose leaf in a `true`-marked tree (after_unknown, after_sensitive) is true. One key chain is
 * kept as a stack and copied at a true leaf only, and the copies share PLAN_LIMITS.pathElements for
 * the whole plan: the earlier version copied the chain at every node, so a 56 KB after_unknown nested
 * 1,000 deep took 132 MB (issue 24). The depth is capped before parsing (checkJsonDepth).
 */
function truePaths(tree: unknown): Path[] {
  const out: Path[] = [];
  const path: Path = [];
  const walk = (node: unknown) => {
    if (node === true) {
      if (pathBudget < path.length) return;
      pathBudget -= Math.max(1, path.length);
      out.push(path.slice());
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        path.push(i);
        walk(node[i]);
        path.pop();
      }
    } else if (isRecord(node)) {
      for (const k of Object.keys(node)) {
        path.push(k);
        walk(node[k]);
        path.pop();
      }
    }
  };
  walk(tree);
  return out;
}

const REMOVE = Symbol('remove');

/** `value` (a copy of it) with what the `true` leaves of `marks` mark taken out: an element of a list becomes null, a key goes. */
function redactInPlace(value: unknown, marks: unknown): unknown {
  if (marks === true) return REMOVE;
  if (Array.isArray(marks) && Array.isArray(value)) {
    for (let i = 0; i < marks.length && i < value.length; i++)
      if (redactInPlace(value[i], marks[i]) === REMOVE) value[i] = null;
  } else if (isRecord(marks) && isRecord(value)) {
    for (const k of Object.keys(marks))
      if (k in value && redactInPlace(value[k], marks[k]) === REMOVE) delete value[k];
  }
  return value;
}

/** The value with the sensitive parts taken out (sensitive values never travel further than here). */
function without(value: unknown, ...marks: unknown[]): unknown {
  if (
    value === null ||
    typeof value !== 'object' ||
    !marks.some((m) => m === true || (m && typeof m === 'object'))
  )
    return value;
  let copy: unknown = structuredClone(value);
  for (const m of marks) if (redactInPlace(copy, m) === REMOVE) copy = null;
  return copy;
}

function actionOf(actions: string[]): { action: PlanAction; order: PlanResourceChange['replaceOrder'] } {
  const key = actions.join(',');
  switch (key) {
    case 'create':
      return { action: 'create', order: null };
    case 'delete':
      return { action: 'delete', order: null };
    case 'update':
      return { action: 'update', order: null };
    case 'read':
      return { action: 'read', order: null };
    case 'forget':
      return { action: 'forget', order: null };
    case 'delete,create':
      return { action: 'replace', order: 'delete_first' };
    case 'create,delete':
      return { action: 'replace', order: 'create_first' };
    default:
      return { action: 'no-op', order: null };
  }
}

const REASONS: Record<string, string> = {
  replace_because_tainted: 'replace_because_tainted',
  replace_by_request: 'replace_by_request',
  replace_by_triggers: 'replace_by_triggers',
  replace_because_cannot_update: 'replace_because_cannot_update',
  delete_because_no_resource_config: 'delete_because_no_resource_config',
  delete_because_no_module: 'delete_because_no_module',
  delete_because_wrong_repetition: 'delete_because_no_resource_config',
  delete_because_count_index: 'delete_because_count_index',
  delete_because_each_key: 'delete_because_each_key',
  read_because_config_unknown: 'read_because_config_unknown',
  read_because_dependency_pending: 'read_because_dependency_pending',
};

/**
 * True when the document is a plan as `terraform show -json <planfile>` prints it, or such a plan
 * trimmed to its `resource_changes` (tools that pass plans around keep only those): then each
 * change must have its address and change.
 */
export function isJsonPlan(doc: unknown): doc is Json {
  if (!isRecord(doc)) return false;
  if (
    typeof doc.format_version === 'string' &&
    (Array.isArray(doc.resource_changes) || isRecord(doc.planned_values) || Array.isArray(doc.resource_drift))
  )
    return true;
  const rcs = doc.resource_changes;
  return (
    Array.isArray(rcs) &&
    rcs.length > 0 &&
    rcs.every((rc) => isRecord(rc) && typeof rc.address === 'string' && isRecord(rc.change))
  );
}

/** Reads `terraform show -json <planfile>` into the plan model. */
export function parsePlanJson(doc: Json): ParsedPlan {
  pathBudget = PLAN_LIMITS.pathElements;
  const changes: PlanResourceChange[] = [];
  const rcs = Array.isArray(doc.resource_changes) ? doc.resource_changes : [];
  rcs.forEach((rc, index) => {
    if (!isRecord(rc) || !isRecord(rc.change) || typeof rc.address !== 'string') return;
    const ch = rc.change;
    const actions = Array.isArray(ch.actions) ? ch.actions.map(String) : ['no-op'];
    const { action, order } = actionOf(actions);
    const importing = isRecord(ch.importing) ? String(ch.importing.id ?? '') : null;
    const movedFrom = typeof rc.previous_address === 'string' ? rc.previous_address : null;
    // Unchanged objects that are neither moved nor imported are not part of the review.
    if (action === 'no-op' && importing === null && movedFrom === null) return;
    const sensitive = [...truePaths(ch.before_sensitive), ...truePaths(ch.after_sensitive)];
    const seen = new Set<string>();
    const uniqueSensitive = sensitive.filter(
      (p) => !seen.has(JSON.stringify(p)) && seen.add(JSON.stringify(p)),
    );
    const parts = addressParts(rc.address);
    const deposed = typeof rc.deposed === 'string' ? rc.deposed : null;
    let reason =
      typeof rc.action_reason === 'string' ? (REASONS[rc.action_reason] ?? rc.action_reason) : null;
    if (deposed) reason = 'deposed';
    changes.push({
      address: rc.address,
      mode: rc.mode === 'data' ? 'data' : parts.mode,
      type: typeof rc.type === 'string' ? rc.type : parts.type,
      name: typeof rc.name === 'string' ? rc.name : parts.name,
      action,
      replaceOrder: order,
      reason,
      replacePaths: Array.isArray(ch.replace_paths) ? (ch.replace_paths as Path[]) : [],
      movedFrom,
      importing,
      deposed,
      before:
        action === 'create' || action === 'read' || !isRecord(ch.before)
          ? null
          : (without(ch.before, ch.before_sensitive, ch.after_sensitive) as Json),
      after:
        action === 'delete' || action === 'forget' || !isRecord(ch.after)
          ? null
          : (without(ch.after, ch.before_sensitive, ch.after_sensitive) as Json),
      afterUnknown: truePaths(ch.after_unknown),
      sensitive: uniqueSensitive,
      source: { kind: 'json', pointer: `/resource_changes/${index}` },
    });
  });
  const drift: ParsedPlan['drift'] = [];
  const rds = Array.isArray(doc.resource_drift) ? doc.resource_drift : [];
  rds.forEach((rd, index) => {
    if (!isRecord(rd) || !isRecord(rd.change) || typeof rd.address !== 'string') return;
    const ch = rd.change;
    const actions = Array.isArray(ch.actions) ? ch.actions.map(String) : [];
    const deleted = actions.includes('delete');
    const parts = addressParts(rd.address);
    drift.push({
      address: rd.address,
      type: parts.type,
      name: parts.name,
      change: deleted ? 'delete' : 'update',
      before: isRecord(ch.before)
        ? (without(ch.before, ch.before_sensitive, ch.after_sensitive) as Json)
        : null,
      after:
        deleted || !isRecord(ch.after)
          ? null
          : (without(ch.after, ch.before_sensitive, ch.after_sensitive) as Json),
      source: { kind: 'json', pointer: `/resource_drift/${index}` },
    });
  });
  const outputs: ParsedPlan['outputs'] = [];
  if (isRecord(doc.output_changes)) {
    for (const [name, oc] of Object.entries(doc.output_changes)) {
      if (!isRecord(oc) || !Array.isArray(oc.actions)) continue;
      const { action } = actionOf(oc.actions.map(String));
      if (action !== 'no-op') outputs.push({ name, action });
    }
  }
  return {
    format: 'json',
    terraformVersion: typeof doc.terraform_version === 'string' ? doc.terraform_version : null,
    changes,
    drift,
    summaryLine: null,
    noChanges: changes.length === 0,
    outputs,
    errors: doc.errored === true ? ['Terraform reported that planning failed (errored: true).'] : [],
    warnings: [],
  };
}
