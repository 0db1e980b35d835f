import { describe, expect, it } from 'vitest';
import { safeNext } from './safe-next';

const ORIGIN = 'https://opsi.example.com';

describe('safeNext', () => {
  it.each([
    '/\t/evil.example',
    '/%09/evil.example'.replace('%09', '\t'),
    '/\n/evil.example',
    '/\r\n/evil.example',
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/\\/evil.example',
    'https://evil.example/x',
    'http://opsi.example.com/x',
    'javascript:alert(1)',
    ' //evil.example',
    '\t//evil.example',
    '/.//evil.example',
    '//opsi.example.com@evil.example',
    'https://opsi.example.com.evil.example/',
  ])('%j stays on the origin', (next) => {
    const out = safeNext(next, ORIGIN);
    expect(out).toBe('/');
    expect(new URL(out, ORIGIN).origin).toBe(ORIGIN);
  });

  it('keeps same-origin paths with their query and fragment', () => {
    expect(safeNext('/settings/tokens', ORIGIN)).toBe('/settings/tokens');
    expect(safeNext('/findings?status=open#top', ORIGIN)).toBe('/findings?status=open#top');
    expect(safeNext('https://opsi.example.com/graph', ORIGIN)).toBe('/graph');
    // A scheme-only URL of the origin's own scheme is a relative path; of another scheme, another origin.
    expect(safeNext('https:evil.example', ORIGIN)).toBe('/evil.example');
    expect(safeNext('https:evil.example', 'http://127.0.0.1:8080')).toBe('/');
    expect(safeNext('/%09/evil.example', ORIGIN)).toBe('/%09/evil.example'); // a path here, encoded
    expect(new URL(safeNext('/%2F%2Fevil.example', ORIGIN), ORIGIN).origin).toBe(ORIGIN);
  });

  it('anything but a string is /', () => {
    expect(safeNext(undefined, ORIGIN)).toBe('/');
    expect(safeNext(['/a'], ORIGIN)).toBe('/');
    expect(safeNext('', ORIGIN)).toBe('/');
  });
});
