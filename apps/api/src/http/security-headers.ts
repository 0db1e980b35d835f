/** True when the service is published over HTTPS (PUBLIC_URL), whatever the hop to it speaks. */
export function isHttpsPublicUrl(publicUrl: string): boolean {
  return new URL(publicUrl).protocol === 'https:';
}

/**
 * The headers on every answer. HSTS when PUBLIC_URL is https: the TLS proxy in front may speak plain
 * HTTP to the service (no TRUST_PROXY), but browsers only ever reach it over HTTPS. One year, no
 * includeSubDomains (the service does not own its parent domain's other hosts).
 */
export function securityHeaders(publicUrl: string): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy':
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ...(isHttpsPublicUrl(publicUrl) ? { 'Strict-Transport-Security': 'max-age=31536000' } : {}),
  };
}
