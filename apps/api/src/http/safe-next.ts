/**
 * A redirect target from a request (`?next=`, a form's `next`) as a path on this service, or `/`.
 * The target is resolved against the service's origin with the WHATWG URL parser, the one browsers use
 * to follow Location, so whatever it strips or rewrites (tabs and newlines, `\` as `/`, `https:evil`)
 * is judged as the browser will see it; a target that lands on another origin, or a path that a
 * browser would read as scheme-relative (`//host`), falls back to `/`.
 */
export function safeNext(next: unknown, origin: string): string {
  if (typeof next !== 'string' || next === '') return '/';
  const base = new URL(origin);
  let target: URL;
  try {
    target = new URL(next, base);
  } catch {
    return '/';
  }
  if (target.origin !== base.origin) return '/';
  const path = `${target.pathname}${target.search}${target.hash}`;
  return path.startsWith('/') && !path.startsWith('//') ? path : '/';
}
