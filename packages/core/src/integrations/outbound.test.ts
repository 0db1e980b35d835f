import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch, OutboundRefused, refusalOf } from './outbound';

describe('refusalOf', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['::1', /loopback/],
    ['::ffff:127.0.0.1', /127\.0\.0\.1 is a loopback/],
    ['169.254.169.254', /cloud metadata/],
    ['::ffff:169.254.169.254', /cloud metadata/],
    ['fd00:ec2::254', /cloud metadata/],
    ['169.254.10.1', /link-local/],
    ['fe80::1', /link-local/],
    ['10.1.2.3', /RFC 1918/],
    ['172.31.255.255', /RFC 1918/],
    ['192.168.0.1', /RFC 1918/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['fc00::1', /unique-local/],
    ['fdff::1', /unique-local/],
    ['224.0.0.251', /multicast/],
    ['ff02::1', /multicast/],
    ['0.0.0.0', /unspecified/],
    ['::', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['64:ff9b::7f00:1', /special-purpose/],
    // IPv4-compatible (::a.b.c.d, deprecated): the URL parser writes [::127.0.0.1] as [::7f00:1], which
    // ipaddr.js calls unicast; a host that tunnels ::/96 reaches 127.0.0.1 through it.
    ['::7f00:1', /IPv4-compatible/],
    ['::a9fe:a9fe', /IPv4-compatible/],
    ['::808:808', /IPv4-compatible/],
  ])('%s is refused', (address, rule) => {
    expect(refusalOf(address)).toMatch(rule);
  });

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is reached', (address) => {
    expect(refusalOf(address)).toBeUndefined();
  });

  it('an allow-list entry lets exactly its addresses through', () => {
    const policy = { allowCidrs: ['127.0.0.1/32'] };
    expect(refusalOf('127.0.0.1', policy)).toBeUndefined();
    expect(refusalOf('::ffff:127.0.0.1', policy)).toBeUndefined();
    expect(refusalOf('127.0.0.2', policy)).toMatch(/loopback/);
    expect(refusalOf('::1', policy)).toMatch(/loopback/);
  });
});

describe('guardedFetch', () => {
  let server: Server;
  let port: number;
  const hits: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/redirect') res.writeHead(302, { location: '/landed' }).end();
      else res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('refuses an address literal before connecting', async () => {
    await expect(guardedFetch(`http://127.0.0.1:${port}/x`, { method: 'POST' })).rejects.toThrow(
      OutboundRefused,
    );
    expect(hits).toEqual([]);
  });

  it('refuses an IPv4-compatible literal, which the URL parser rewrites to hex, before connecting', async () => {
    await expect(guardedFetch(`http://[::127.0.0.1]:${port}/v`, { method: 'POST' })).rejects.toThrow(
      OutboundRefused,
    );
    expect(hits).toEqual([]);
  });

  it('refuses a name when it resolves to a refused address, at connect time', async () => {
    await expect(guardedFetch(`http://localhost:${port}/y`, { method: 'POST' })).rejects.toThrow(
      /localhost resolves to 127\.0\.0\.1 is a loopback address/,
    );
    expect(hits).toEqual([]);
  });

  it('with the allow-list posts, and answers a redirect without following it', async () => {
    const allow = { allowCidrs: ['127.0.0.1/32'] };
    const ok = await guardedFetch(`http://localhost:${port}/ok`, { method: 'POST', body: 'x' }, allow);
    expect(ok.status).toBe(200);
    const moved = await guardedFetch(`http://127.0.0.1:${port}/redirect`, { method: 'POST' }, allow);
    expect(moved.status).toBe(302);
    expect(hits).toEqual(['/ok', '/redirect']);
  });
});
