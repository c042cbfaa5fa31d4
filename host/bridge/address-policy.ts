/**
 * @module host/bridge/address-policy
 * Which IP addresses the bridge may connect to: a public unicast address, or one inside a CIDR the
 * policy names in `allowPrivateCidrs`. IPv4-mapped IPv6 addresses are un-mapped first, so
 * `::ffff:7f00:1` is judged as `127.0.0.1`; NAT64, 6to4, Teredo and every other special range are
 * not "unicast" and are refused unless a CIDR allows them.
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { fail } from '../../contracts/errors.js';

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses the policy's CIDR list once; an invalid entry is an operator error and throws. */
export function parseCidrs(list: readonly string[]): Cidr[] {
  return list.map((c) => {
    try {
      return c.includes('/')
        ? ipaddr.parseCIDR(c)
        : ([ipaddr.parse(c), ipaddr.parse(c).kind() === 'ipv4' ? 32 : 128] as Cidr);
    } catch {
      throw fail('GW_ERR_POLICY_INVALID', { message: `allowPrivateCidrs: "${c}" is not a CIDR range` });
    }
  });
}

/** The address without URL brackets when the host is an IP literal, else undefined. */
export function ipLiteralOf(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return net.isIP(bare) ? bare : undefined;
}

export interface AddressVerdict {
  allowed: boolean;
  /** ipaddr.js range name, e.g. "loopback", "linkLocal", "unicast" */
  range: string;
}

/** Allowed iff the (un-mapped) address is public unicast or inside an allowed CIDR. */
export function judgeAddress(address: string, allowed: readonly Cidr[]): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return { allowed: false, range: 'unparseable' };
  }
  let range: string = parsed.range();
  // IPv4-compatible IPv6 (::/96, deprecated): ::7f00:1 is 127.0.0.1, but ipaddr.js calls it unicast
  if (range === 'unicast' && parsed.kind() === 'ipv6' && parsed.match(ipaddr.parse('::'), 96)) range = 'ipv4Compatible';
  if (range === 'unicast') return { allowed: true, range };
  for (const [net_, bits] of allowed) {
    if (net_.kind() === parsed.kind() && parsed.match([net_, bits] as never)) return { allowed: true, range };
  }
  return { allowed: false, range };
}
