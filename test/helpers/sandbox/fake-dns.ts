/**
 * @module test/helpers/sandbox/fake-dns
 * A stub resolver for the bridge (same contract as `dns.lookup` with `all: true`), so SSRF tests
 * control what a name resolves to without touching real DNS. Unknown names fail with ENOTFOUND.
 */
import type { Resolver } from '../../../host/bridge/index.js';

export function fakeResolver(table: Record<string, string[]>, asked: string[] = []): Resolver {
  return (hostname, _options, cb) => {
    asked.push(hostname);
    const addresses = table[hostname];
    setImmediate(() => {
      if (!addresses)
        return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      cb(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    });
  };
}
