/**
 * @module host/security-report/cases/ssrf
 * SSRF forms the corpus does not try: declared names that resolve (from the report's DNS table) to
 * loopback, private, IPv4-mapped, NAT64, 6to4, link-local, unique-local, CGNAT and metadata
 * addresses; redirects of every status to such addresses and names; the internal canary by port,
 * by scheme and behind user information. Every one must be refused by the bridge before a
 * connection is made: the address rules are checked on the URL, then on every resolved address
 * inside the connection's own DNS lookup, on every hop.
 */
import { REFUSED_EGRESS, type AttackCase } from '../catalogue.js';

/** Fetches args.url and returns what came back; a refusal is thrown (the item then names its code). */
const FETCH_URL = `async (ctx, args) => {
  const res = await ctx.http(args.url);
  return { status: res.status, url: res.url, body: res.body.slice(0, 200) };
}`;

const redirect = (to: string, status = 302): string =>
  `https://api.attack.test/redirect?status=${status}&to=${encodeURIComponent(to)}`;

function refused(id: string, url: string, tries: string, upstreamAtMost = 0): AttackCase {
  return {
    id,
    class: 'ssrf',
    origin: 'new',
    tries,
    handler: FETCH_URL,
    args: { url },
    expected: { outcome: 'error', codes: REFUSED_EGRESS, upstreamAtMost },
  };
}

export const SSRF_CASES: AttackCase[] = [
  refused(
    'ssrf-dns-name-to-loopback',
    'https://loopback.attack.test/admin',
    'A declared name whose DNS answer is 127.0.0.1.',
  ),
  refused(
    'ssrf-dns-name-to-private',
    'https://private.attack.test/',
    'A declared name whose DNS answer is 10.0.0.1 (RFC 1918).',
  ),
  refused(
    'ssrf-dns-name-to-v4-mapped-v6',
    'https://mapped.attack.test/',
    'A declared name whose DNS answer is ::ffff:127.0.0.1 (IPv4-mapped IPv6 of loopback).',
  ),
  refused(
    'ssrf-dns-name-to-nat64',
    'https://nat64.attack.test/',
    'A declared name whose DNS answer is 64:ff9b::7f00:1 (NAT64 of loopback).',
  ),
  refused(
    'ssrf-dns-name-to-6to4',
    'https://sixtofour.attack.test/',
    'A declared name whose DNS answer is 2002:7f00:1::1 (6to4 of loopback).',
  ),
  refused(
    'ssrf-dns-name-to-link-local-v6',
    'https://linklocal6.attack.test/',
    'A declared name whose DNS answer is fe80::1 (IPv6 link-local).',
  ),
  refused(
    'ssrf-dns-name-to-aws-v6-metadata',
    'https://ula.attack.test/latest/meta-data/',
    'A declared name whose DNS answer is fd00:ec2::254 (the IPv6 instance metadata address).',
  ),
  refused(
    'ssrf-dns-name-to-cgnat',
    'https://cgnat.attack.test/',
    'A declared name whose DNS answer is 100.64.0.1 (carrier-grade NAT).',
  ),
  refused(
    'ssrf-metadata-by-name',
    'https://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token',
    'The cloud metadata service by its DNS name (resolving to 169.254.169.254).',
  ),
  refused('ssrf-private-literal', 'https://10.0.0.1/', 'A private IPv4 literal the plugin declares in its egress.'),
  refused(
    'ssrf-unspecified-v4',
    'https://0.0.0.0/',
    'The unspecified address 0.0.0.0, which many stacks treat as loopback.',
  ),
  refused(
    'ssrf-canary-by-port',
    'https://127.0.0.1:{canaryPort}/internal',
    'The internal service directly: loopback literal with its port.',
  ),
  refused(
    'ssrf-canary-by-http',
    'http://127.0.0.1:{canaryPort}/internal',
    'The internal service directly over plain http.',
  ),
  refused(
    'ssrf-canary-behind-userinfo',
    'https://api.attack.test@127.0.0.1:{canaryPort}/internal',
    'The internal service behind user information that names a declared host.',
  ),
  refused(
    'ssrf-declared-host-other-port',
    'https://api.attack.test:{canaryPort}/internal',
    "A declared host with the internal service's port.",
  ),
  refused(
    'ssrf-redirect-301-to-loopback',
    redirect('https://127.0.0.1/admin', 301),
    'An allowed upstream answers 301 to a loopback literal.',
    1,
  ),
  refused(
    'ssrf-redirect-303-to-metadata-name',
    redirect('https://metadata.google.internal/computeMetadata/v1/', 303),
    'An allowed upstream answers 303 to the metadata service by name.',
    1,
  ),
  refused(
    'ssrf-redirect-307-to-mapped-name',
    redirect('https://mapped.attack.test/', 307),
    'An allowed upstream answers 307 to a name resolving to IPv4-mapped loopback.',
    1,
  ),
  refused(
    'ssrf-redirect-308-to-private',
    redirect('https://10.0.0.1/', 308),
    'An allowed upstream answers 308 to a private literal.',
    1,
  ),
  refused(
    'ssrf-redirect-to-canary-http',
    redirect('http://127.0.0.1:{canaryPort}/via-redirect'),
    'An allowed upstream redirects to the internal service over http.',
    1,
  ),
  refused(
    'ssrf-redirect-to-canary-port',
    redirect('https://localhost:{canaryPort}/via-redirect'),
    'An allowed upstream redirects to the internal service by localhost and port.',
    1,
  ),
  refused(
    'ssrf-redirect-scheme-relative',
    redirect('//127.0.0.1/admin'),
    'An allowed upstream redirects to a scheme-relative loopback URL.',
    1,
  ),
  refused(
    'ssrf-redirect-chain-to-loopback-name',
    redirect(redirect('https://loopback.attack.test/')),
    'Two redirects on the allowed upstream, the second to a name resolving to loopback.',
    2,
  ),
  refused(
    'ssrf-redirect-to-unspecified-v6',
    redirect('https://[::]/'),
    'An allowed upstream redirects to [::], the IPv6 unspecified address.',
    1,
  ),
  refused('ssrf-redirect-to-file', redirect('file:///etc/passwd'), 'An allowed upstream redirects to a file: URL.', 1),
];
