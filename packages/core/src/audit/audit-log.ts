import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { type AuditActor, type Db } from '@opsi/db';
import {
  findAuditEntries,
  findAuditPage,
  findLastAuditEntry,
  insertAuditEntry,
  lockAuditChain,
} from './repository';

/** prev_hash of a tenant's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

export interface AuditInput {
  actor: AuditActor;
  action: string;
  target_type: string;
  target_id: string | null;
  details?: Record<string, unknown>;
}

interface HashedFields {
  tenant_id: string;
  seq: number;
  at: Date;
  actor: AuditActor;
  action: string;
  target_type: string;
  target_id: string | null;
  details: Record<string, unknown>;
}

/** sha256 over the previous hash and the entry's canonical JSON (RFC 8785), hex encoded. */
export function computeAuditHash(prevHash: string, entry: HashedFields): string {
  const canonical = canonicalize({
    tenant_id: entry.tenant_id,
    seq: entry.seq,
    at: entry.at.toISOString(),
    actor: entry.actor,
    action: entry.action,
    target_type: entry.target_type,
    target_id: entry.target_id,
    details: entry.details,
  });
  return createHash('sha256').update(prevHash).update('\n').update(canonical!).digest('hex');
}

/**
 * Appends one entry to the tenant's chain. Call it inside the transaction of the change it records.
 * A per-tenant advisory lock serializes appends, and unique (tenant_id, seq) and (tenant_id, prev_hash)
 * make a fork impossible even if the lock were bypassed.
 */
export async function appendAudit(tx: Db, tenantId: string, input: AuditInput) {
  await lockAuditChain(tx, tenantId);
  const last = await findLastAuditEntry(tx, tenantId);
  // JavaScript dates carry milliseconds; storing exactly what was hashed keeps the hash reproducible.
  const fields: HashedFields = {
    tenant_id: tenantId,
    seq: (last?.seq ?? 0) + 1,
    at: new Date(),
    actor: input.actor,
    action: input.action,
    target_type: input.target_type,
    target_id: input.target_id,
    details: input.details ?? {},
  };
  const prevHash = last?.hash ?? GENESIS_HASH;
  return insertAuditEntry(tx, {
    ...fields,
    actor: JSON.stringify(fields.actor),
    details: JSON.stringify(fields.details),
    prev_hash: prevHash,
    hash: computeAuditHash(prevHash, fields),
  });
}

/** The tenant's newest entries first. */
export function listAudit(db: Db, tenantId: string, limit: number) {
  return findAuditEntries(db, tenantId, limit);
}

export interface AuditVerification {
  valid: boolean;
  checked: number;
  first_invalid_id: string | null;
}

/**
 * Recomputes the tenant's chain from the first entry. An entry is invalid when its seq is not the next
 * one, its prev_hash is not the previous entry's hash, or its hash does not match its content: an edit,
 * a deletion or an insertion anywhere is reported at the first entry it breaks.
 */
export async function verifyAuditChain(
  db: Db,
  tenantId: string,
  pageSize = 1000,
): Promise<AuditVerification> {
  let checked = 0;
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1;
  for (;;) {
    const page = await findAuditPage(db, tenantId, expectedSeq, pageSize);
    for (const row of page) {
      checked++;
      const recomputed = computeAuditHash(prevHash, { ...row, target_id: row.target_id });
      if (row.seq !== expectedSeq || row.prev_hash !== prevHash || row.hash !== recomputed) {
        return { valid: false, checked, first_invalid_id: row.id };
      }
      prevHash = row.hash;
      expectedSeq++;
    }
    if (page.length < pageSize) return { valid: true, checked, first_invalid_id: null };
  }
}
