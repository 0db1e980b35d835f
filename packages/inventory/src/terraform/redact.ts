import { isRecord } from './values';

/** What a redacted value becomes: never the value, never a hash of it. */
export const REDACTED = '(sensitive)';

/** One step of a path into a resource's values: an attribute name or a list index / map key. */
export type PathStep = string | number;

/**
 * Attribute names that hold secrets whatever the state says (version 3 states and older providers
 * mark nothing sensitive): passwords, private keys, secrets and tokens, as the AWS provider names them.
 */
const SECRET_NAME =
  /(^|_)(password|passwd|secret|secret_string|secret_binary|private_key|private_key_pem|private_key_openssh|password_data|token|auth_token|api_key|access_token|client_secret|ses_smtp_password_v4|key_material|encrypted_secret|encrypted_password|encrypted_ses_smtp_password_v4|connection_string|credentials?)$/i;

/** Whether an attribute name is one that holds a secret by its name alone. */
export const isSecretName = (name: string): boolean => SECRET_NAME.test(name);

function redactAt(node: unknown, path: PathStep[]): unknown {
  if (!path.length) return node === null || node === undefined || node === '' ? node : REDACTED;
  const [step, ...rest] = path;
  if (Array.isArray(node) && typeof step === 'number' && step < node.length) {
    const copy = [...node];
    copy[step] = redactAt(copy[step], rest);
    return copy;
  }
  if (isRecord(node) && step !== undefined && String(step) in node) {
    return { ...node, [String(step)]: redactAt(node[String(step)], rest) };
  }
  return node;
}

/** Replaces the value at each path (an empty path is the whole value) with REDACTED. */
export function redactPaths(values: Record<string, unknown>, paths: PathStep[][]): Record<string, unknown> {
  let out: unknown = values;
  for (const p of paths) out = redactAt(out, p);
  return isRecord(out) ? out : { value: REDACTED };
}

/**
 * Paths of `terraform show -json`'s `sensitive_values`: the same shape as `values`, with `true` where a
 * value is sensitive (a whole block or attribute, or one element).
 */
export function sensitiveValuePaths(marks: unknown, at: PathStep[] = []): PathStep[][] {
  if (marks === true) return [at];
  if (Array.isArray(marks)) return marks.flatMap((m, i) => sensitiveValuePaths(m, [...at, i]));
  if (isRecord(marks)) return Object.entries(marks).flatMap(([k, m]) => sensitiveValuePaths(m, [...at, k]));
  return [];
}

/**
 * Paths of a version 4 instance's `sensitive_attributes`: `[[{type: "get_attr", value: "password"}],
 * [{type: "get_attr", value: "tags"}, {type: "index", value: {value: "k", type: "string"}}]]`. Index
 * keys are cty JSON (`{value, type}`); a bare value is taken as written. Unknown steps end the path
 * there, so a step we cannot follow redacts more, never less.
 */
export function stateSensitivePaths(raw: unknown): PathStep[][] {
  if (!Array.isArray(raw)) return [];
  const out: PathStep[][] = [];
  for (const steps of raw) {
    if (!Array.isArray(steps)) continue;
    const path: PathStep[] = [];
    for (const s of steps) {
      if (!isRecord(s)) break;
      if (s.type === 'get_attr' && typeof s.value === 'string') path.push(s.value);
      else if (s.type === 'index') {
        const key = isRecord(s.value) && 'value' in s.value ? s.value.value : s.value;
        if (typeof key === 'string' || typeof key === 'number') path.push(key);
        else break;
      } else break;
    }
    if (path.length) out.push(path);
  }
  return out;
}

/** Redacts every value under an attribute whose name says it holds a secret, at any depth. */
export function redactSecretNames(values: unknown): unknown {
  if (Array.isArray(values)) return values.map(redactSecretNames);
  if (!isRecord(values)) return values;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    out[k] =
      isSecretName(k) && v !== null && v !== '' && v !== undefined && typeof v !== 'boolean'
        ? REDACTED
        : redactSecretNames(v);
  }
  return out;
}
