import { sql } from 'kysely';
import { ACTIVE_FINDING_STATUSES, UNRESOLVED_FINDING_STATUSES } from '@opsi/contracts';

const literals = (values: readonly string[]) => sql.raw(`(${values.map((v) => `'${v}'`).join(', ')})`);

/**
 * The vocabulary's status sets as SQL lists, for raw statements: `f.status in ${activeFindingStatuses}`.
 * Literals rather than parameters, so each statement reads as it did when the lists were typed out
 * (the same plan, the same prepared-statement text).
 */
export const activeFindingStatuses = literals(ACTIVE_FINDING_STATUSES);
export const unresolvedFindingStatuses = literals(UNRESOLVED_FINDING_STATUSES);
