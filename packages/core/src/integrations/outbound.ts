import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch, type RequestInit, type Response } from 'undici';
import type { Config } from '@opsi/config';
import { BadRequest } from '../errors';

/**
 * The one client for requests to URLs a tenant set (webhook and Slack notifiers). Every address it
 * connects to is checked when the socket is opened (the resolver's answer itself, so a name that
 * resolves to a public address when installed and to 169.254.169.254 later, DNS rebinding, is caught),
 * redirects are not followed, and only public unicast addresses are reached. Ranges come from ipaddr.js
 * (IANA's special-purpose registries) rather than hand-written CIDR tables.
 */

/** Operator-set exceptions (OUTBOUND_ALLOW_CIDRS): tests that post to a receiver on 127.0.0.1. */
export interface OutboundPolicy {
  allowCidrs: readonly string[];
}

export const NO_EXCEPTIONS: OutboundPolicy = { allowCidrs: [] };

/** Cloud metadata services' addresses, named as such in refusals (their ranges are refused anyway). */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '169.254.170.2']);

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const RULES: Record<string, string> = {
  loopback: 'a loopback address',
  linkLocal: 'a link-local address (169.254.0.0/16, fe80::/10)',
  private: 'a private address (RFC 1918)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  uniqueLocal: 'a unique-local address (fc00::/7)',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address (0.0.0.0/8, ::)',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

/** Why an address may not be reached, or undefined when it may (public unicast or allowed). */
export function refusalOf(address: string, policy: OutboundPolicy = NO_EXCEPTIONS): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return `${address} is not an IP address`;
  }
  // ::ffff:a.b.c.d reaches a.b.c.d: judge the IPv4 address it carries.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  for (const cidr of policy.allowCidrs) {
    const [net, bits] = ipaddr.parseCIDR(cidr);
    if (net.kind() === ip.kind() && ip.match(net, bits)) return undefined;
  }
  const shown = ip.toString();
  if (METADATA.has(shown)) return `${shown} is a cloud metadata address`;
  const range = ip.range();
  // ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291; the URL parser writes it in hex) is no public
  // IPv6 address, and a host that tunnels ::/96 reaches a.b.c.d through it. ipaddr.js calls it unicast.
  if (range === 'unicast' && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).match(IPV4_COMPATIBLE))
    return `${shown} is an IPv4-compatible address (::/96, deprecated)`;
  if (range === 'unicast') return undefined;
  return `${shown} is ${RULES[range] ?? `a special-purpose address (${range})`}`;
}

/** A refused connection: the request was never sent. */
export class OutboundRefused extends Error {
  constructor(readonly rule: string) {
    super(`refused: ${rule}; only public addresses are reached`);
    this.name = 'OutboundRefused';
  }
}

/** The policy of a configuration (its OUTBOUND_ALLOW_CIDRS, empty outside tests). */
export function outboundPolicyFor(config: Pick<Config, 'OUTBOUND_ALLOW_CIDRS'>): OutboundPolicy {
  return { allowCidrs: config.OUTBOUND_ALLOW_CIDRS };
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** dns.lookup that fails, before any socket is opened, when one of the answers is refused. */
function guardedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const why = refusalOf(a.address, policy);
        if (why) return callback(new OutboundRefused(`${hostname} resolves to ${why}`), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  };
}

const agents = new Map<string, Agent>();
function agentFor(policy: OutboundPolicy): Agent {
  const key = policy.allowCidrs.join(',');
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(policy) as never } });
    agents.set(key, agent);
  }
  return agent;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * POSTs (or any method) to a tenant-set URL through the guard. Throws OutboundRefused when the host is,
 * or resolves to, a refused address; a redirect is answered as is (3xx), never followed.
 */
export async function guardedFetch(
  url: string,
  init: Omit<RequestInit, 'dispatcher' | 'redirect'>,
  policy: OutboundPolicy = NO_EXCEPTIONS,
): Promise<Response> {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new OutboundRefused(`${parsed.protocol} is not http(s)`);
  // An address literal is connected to without a lookup: judge it here.
  const host = hostOf(parsed);
  if (isIP(host)) {
    const why = refusalOf(host, policy);
    if (why) throw new OutboundRefused(why);
  }
  try {
    return await undiciFetch(parsed, { ...init, redirect: 'manual', dispatcher: agentFor(policy) });
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof OutboundRefused) throw cause;
    throw e;
  }
}

/**
 * The install-time check of a tenant-set URL: 400 naming the rule when its host is, or now resolves to,
 * a refused address. A name that does not resolve yet is accepted (delivery checks again when it
 * connects).
 */
export async function assertOutboundUrl(url: URL, policy: OutboundPolicy = NO_EXCEPTIONS): Promise<void> {
  const host = hostOf(url);
  const refuse = (why: string) => {
    throw new BadRequest(`url is refused: ${why}; notifiers only post to public addresses`);
  };
  if (isIP(host)) {
    const why = refusalOf(host, policy);
    if (why) refuse(why);
    return;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), 2000);
    dnsLookup(host, { all: true }, (err, found) => {
      clearTimeout(timer);
      resolve(err ? [] : found);
    });
  });
  for (const a of addresses) {
    const why = refusalOf(a.address, policy);
    if (why) refuse(`${host} resolves to ${why}`);
  }
}
