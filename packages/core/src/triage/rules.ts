import { TriageRuleActions } from '@opsi/contracts';
import type { Db } from '@opsi/db';
import { appendAudit } from '../audit';
import type { Auth } from '../context';
import { BadRequest, Conflict, NotFound } from '../errors';
import { builtInRules, type TriageDeps, type TriageRuleView } from './pipeline';
import { deleteTriageRuleRow, insertTriageRule, lockTriageRule, updateTriageRuleRow } from './repository';

type Kind = keyof typeof TriageRuleActions;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function actor(auth: Auth) {
  return {
    type: 'user' as const,
    id: auth.user.id,
    email: auth.user.email,
    token_id: auth.kind === 'token' ? auth.token.id : null,
  };
}

function view(row: {
  id: string;
  name: string;
  kind: string;
  match: unknown;
  action: unknown;
  enabled: boolean;
}): TriageRuleView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as Kind,
    match: row.match as Record<string, unknown>,
    action: row.action as Record<string, unknown>,
    enabled: row.enabled,
    built_in: false,
  };
}

/** A built-in rule's id is refused with 409 (they are the same for every tenant); anything else unknown is 404. */
function refuseBuiltIn(
  deps: Pick<TriageDeps, 'dedupeWindowMinutes' | 'correlationWindowMinutes'>,
  id: string,
) {
  if (builtInRules(deps).some((r) => r.id === id))
    throw new Conflict(
      `${id} is a built-in rule: it cannot be changed or deleted. Write a rule of the same kind that matches the alerts instead: a tenant's rules come before the built-in ones.`,
    );
  if (!UUID.test(id)) throw new NotFound(`no triage rule ${id}`);
}

/** Checks a rule's action against its kind; a 400 names the field. */
export function checkRuleAction(kind: Kind, action: unknown): Record<string, unknown> {
  const parsed = TriageRuleActions[kind].safeParse(action ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${['action', ...i.path].join('.')}: ${i.message}`);
    throw new BadRequest(`Invalid body for a ${kind} rule: ${issues.join('; ')}`);
  }
  return parsed.data as Record<string, unknown>;
}

/** Writes a tenant triage rule (its triage applies it from the next batch on); audit-logged. */
export async function createTriageRule(
  db: Db,
  auth: Auth,
  input: {
    name: string;
    kind: Kind;
    match: Record<string, unknown>;
    action: Record<string, unknown>;
    enabled: boolean;
  },
): Promise<TriageRuleView> {
  const action = checkRuleAction(input.kind, input.action);
  return db.transaction().execute(async (tx) => {
    const row = await insertTriageRule(tx, {
      tenantId: auth.tenant.id,
      name: input.name,
      kind: input.kind,
      match: JSON.stringify(input.match),
      action: JSON.stringify(action),
      enabled: input.enabled,
    });
    await appendAudit(tx, auth.tenant.id, {
      actor: actor(auth),
      action: 'triage_rule.created',
      target_type: 'triage_rule',
      target_id: row.id,
      details: { name: row.name, kind: row.kind, enabled: row.enabled },
    });
    return view(row);
  });
}

/** Changes a tenant triage rule (name, enabled, match, action); a built-in one is 409. Audit-logged. */
export async function updateTriageRule(
  deps: Pick<TriageDeps, 'db' | 'dedupeWindowMinutes' | 'correlationWindowMinutes'>,
  auth: Auth,
  id: string,
  patch: {
    name?: string | undefined;
    enabled?: boolean | undefined;
    match?: Record<string, unknown> | undefined;
    action?: Record<string, unknown> | undefined;
  },
): Promise<TriageRuleView> {
  refuseBuiltIn(deps, id);
  return deps.db.transaction().execute(async (tx) => {
    const current = await lockTriageRule(tx, auth.tenant.id, id);
    if (!current) throw new NotFound(`no triage rule ${id}`);
    const action =
      patch.action === undefined ? undefined : checkRuleAction(current.kind as Kind, patch.action);
    const row = await updateTriageRuleRow(tx, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      ...(patch.match !== undefined ? { match: JSON.stringify(patch.match) } : {}),
      ...(action !== undefined ? { action: JSON.stringify(action) } : {}),
    });
    await appendAudit(tx, auth.tenant.id, {
      actor: actor(auth),
      action: 'triage_rule.updated',
      target_type: 'triage_rule',
      target_id: id,
      details: { name: row.name, kind: row.kind, fields: Object.keys(patch).sort() },
    });
    return view(row);
  });
}

/** Deletes a tenant triage rule; a built-in one is 409. Audit-logged. */
export async function deleteTriageRule(
  deps: Pick<TriageDeps, 'db' | 'dedupeWindowMinutes' | 'correlationWindowMinutes'>,
  auth: Auth,
  id: string,
): Promise<void> {
  refuseBuiltIn(deps, id);
  await deps.db.transaction().execute(async (tx) => {
    const row = await deleteTriageRuleRow(tx, auth.tenant.id, id);
    if (!row) throw new NotFound(`no triage rule ${id}`);
    await appendAudit(tx, auth.tenant.id, {
      actor: actor(auth),
      action: 'triage_rule.deleted',
      target_type: 'triage_rule',
      target_id: id,
      details: { name: row.name, kind: row.kind },
    });
  });
}
