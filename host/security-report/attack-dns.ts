/**
 * @module host/security-report/attack-dns
 * The report's DNS: the bridge asks it instead of a DNS server, so that declared names can resolve
 * to loopback, private, link-local, NAT64, 6to4 and metadata addresses without a query leaving the
 * machine. `localhost` goes to the system resolver (the hosts file). Any other name is unknown
 * (ENOTFOUND): the report never resolves a name on the network.
 */
import dns from 'node:dns';
import type { Resolver } from '../bridge/index.js';

export const ATTACK_DNS: Record<string, string[]> = {
  'rebind.example.com': ['169.254.169.254'],
  'metadata.google.internal': ['169.254.169.254'],
  'loopback.attack.test': ['127.0.0.1'],
  'private.attack.test': ['10.0.0.1'],
  'mapped.attack.test': ['::ffff:127.0.0.1'],
  'nat64.attack.test': ['64:ff9b::7f00:1'],
  'sixtofour.attack.test': ['2002:7f00:1::1'],
  'linklocal6.attack.test': ['fe80::1'],
  'ula.attack.test': ['fd00:ec2::254'],
  'cgnat.attack.test': ['100.64.0.1'],
};

export const attackResolver: Resolver = (hostname, options, cb) => {
  if (hostname === 'localhost') return void dns.lookup(hostname, options, cb);
  const addresses = ATTACK_DNS[hostname];
  setImmediate(() => {
    if (!addresses) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    cb(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  });
};
