/**
 * @module host/bridge/safe-lookup
 * A `dns.lookup`-compatible function for undici's `connect.lookup`: it resolves the name and
 * refuses the connection if ANY returned address is not allowed. Because the same Agent then
 * connects to the checked address, DNS rebinding between check and connect is impossible.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { judgeAddress, type Cidr } from './address-policy.js';
import { fail } from '../../contracts/errors.js';

export type LookupAddress = { address: string; family: number };
/** The shape of `dns.lookup` with `all: true` (tests pass a stub resolver). */
export type Resolver = (
  hostname: string,
  options: { all: true; family?: number },
  cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** Error code the transport recognises as "the address check refused this host". */
export const ADDRESS_BLOCKED = 'WB_ADDRESS_BLOCKED';

const systemResolver: Resolver = (hostname, options, cb) => dns.lookup(hostname, options, cb);

/** `check: false` only resolves (for operator-named upstream targets). */
export function createSafeLookup(
  allowed: readonly Cidr[],
  resolve: Resolver = systemResolver,
  check = true,
): LookupFunction {
  return function safeLookup(hostname, options, cb): void {
    const family = typeof options.family === 'number' ? options.family : undefined;
    resolve(hostname, family ? { all: true, family } : { all: true }, (err, addresses) => {
      if (err) return cb(err, []);
      if (!addresses || addresses.length === 0)
        return cb(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      for (const a of check ? addresses : []) {
        const verdict = judgeAddress(a.address, allowed);
        if (!verdict.allowed) {
          const e: NodeJS.ErrnoException = fail('WB_ADDRESS_BLOCKED', { host: hostname, range: verdict.range });
          e.code = ADDRESS_BLOCKED;
          return cb(e, []);
        }
      }
      if (options.all) return cb(null, addresses);
      const first = addresses[0] as LookupAddress;
      cb(null, first.address, first.family);
    });
  };
}
