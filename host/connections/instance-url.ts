/**
 * @module host/connections/instance-url
 * A connection's own instance of its provider (GitLab self-managed, a Data Center server), as a
 * person, an agent or the operator names it at connect time, checked before anything is stored or
 * sent there. An instance is an origin: https (http only where the policy's allowHttpInstances
 * says so), no user information, no path, query or fragment; its host not in the policy's
 * denyHosts, and every address it resolves to public unicast or inside http.allowPrivateCidrs (the
 * bridge's address rules, host/bridge/address-policy.ts). An origin the policy maps through
 * `upstreams` was named by the operator and is taken as it is, as the bridge takes it. The bridge
 * checks the addresses again at every request (DNS may change after connect time).
 */
import dns from 'node:dns';
import { instanceOf, type PluginManifest } from '../../contracts/manifest.js';
import { policyHost } from '../../common/normalise-url.js';
import { ipLiteralOf, judgeAddress, parseCidrs, type Cidr, type Resolver } from '../bridge/index.js';
import { ConnectionError, type ConnectionErrorCode } from './errors.js';

/** The policy's rules an instance is checked against. */
export interface InstanceRules {
  allowHttp: boolean;
  allowedCidrs: readonly Cidr[];
  denyHosts: ReadonlySet<string>;
  /** origins the policy maps through `upstreams` (named by the operator) */
  mappedOrigins: ReadonlySet<string>;
  resolve: Resolver;
  /** how long a name may take to resolve, ms */
  resolveTimeoutMs: number;
}

/** The rules from the policy's `http` section and `upstreams`. */
export function instanceRulesOf(
  http: { allowHttpInstances?: boolean; allowPrivateCidrs: readonly string[]; denyHosts: readonly string[] },
  upstreams: Readonly<Record<string, string>>,
  resolve?: Resolver,
): InstanceRules {
  return {
    allowHttp: http.allowHttpInstances === true,
    allowedCidrs: parseCidrs(http.allowPrivateCidrs),
    denyHosts: new Set(http.denyHosts.map((h) => h.toLowerCase().replace(/\.+$/, ''))),
    mappedOrigins: new Set(Object.keys(upstreams).map((o) => new URL(o).origin)),
    resolve: resolve ?? ((host, options, cb) => dns.lookup(host, options, cb)),
    resolveTimeoutMs: 5_000,
  };
}

/** The longest instance URL taken (an origin is far shorter). */
const MAX_CHARS = 300;

const refuse = (code: ConnectionErrorCode, message: string): ConnectionError =>
  new ConnectionError(code, message, { instanceUrl: message });

/**
 * Checks what was given as the instance URL of a connection to `manifest`. Resolves the instance's
 * origin ("https://gitlab.example.com", with a port when it names one), or undefined for the
 * provider's default (nothing given, or the default's own origin). Throws a ConnectionError
 * (GW_ERR_CONNECTION_INSTANCE_INVALID, _BLOCKED or _UNRESOLVABLE) that says what to change.
 */
export async function checkInstanceUrl(
  manifest: Pick<PluginManifest, 'auth' | 'displayName'>,
  raw: unknown,
  rules: InstanceRules,
): Promise<string | undefined> {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return undefined;
  const spec = instanceOf(manifest);
  if (!spec)
    throw refuse(
      'GW_ERR_CONNECTION_INSTANCE_INVALID',
      `${manifest.displayName} takes no instance URL: it connects to its provider's own service only`,
    );
  const url = parseInstance(raw, spec.label, rules.allowHttp);
  if (url.origin === new URL(spec.default).origin) return undefined;
  await checkAddress(url, spec.label, rules);
  return url.origin;
}

/** The instance as a URL, its form checked (scheme, user information, path, query, fragment). */
function parseInstance(raw: unknown, label: string, allowHttp: boolean): URL {
  const invalid = (why: string): ConnectionError => refuse('GW_ERR_CONNECTION_INSTANCE_INVALID', `${label}: ${why}`);
  if (typeof raw !== 'string') throw invalid('must be text, such as https://gitlab.example.com');
  const text = raw.trim();
  if (text.length > MAX_CHARS) throw invalid(`is too long (at most ${MAX_CHARS} characters)`);
  if (/[\u0000-\u0020\u007f]/.test(text)) throw invalid('must not contain spaces or control characters');
  // a bare host name is taken as its https address ("gitlab.example.com")
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw invalid(
      `"${text.slice(0, 100)}" is not a URL: give the instance's address, such as https://gitlab.example.com`,
    );
  }
  const schemes = allowHttp ? 'https (or http)' : 'https';
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
    throw invalid(`must be an ${schemes} address, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username !== '' || url.password !== '')
    throw invalid('must not carry a user name or password: the credential is entered on its own');
  if (url.pathname !== '/')
    throw invalid(
      `must be the instance's address without a path (${url.origin}, not …${url.pathname.slice(0, 60)}): an instance served below a path is not supported`,
    );
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(text))
    throw invalid(`must be the instance's address without a query or fragment (${url.origin})`);
  if (policyHost(url) === '') throw invalid('names no host');
  return url;
}

/** The host is not denied, and is (or resolves only to) addresses the policy allows. */
async function checkAddress(url: URL, label: string, rules: InstanceRules): Promise<void> {
  const host = policyHost(url);
  const blocked = (why: string): ConnectionError => refuse('GW_ERR_CONNECTION_INSTANCE_BLOCKED', `${label}: ${why}`);
  if (rules.denyHosts.has(host)) throw blocked(`the host "${host}" is denied by the server's policy`);
  // named by the operator in `upstreams`: reached as named, as the bridge does
  if (rules.mappedOrigins.has(url.origin)) return;
  const literal = ipLiteralOf(url.hostname);
  const addresses = literal !== undefined ? [literal] : await resolveAll(host, label, rules);
  for (const address of addresses) {
    const verdict = judgeAddress(address, rules.allowedCidrs);
    if (!verdict.allowed)
      throw blocked(
        `${literal !== undefined ? `${host} is` : `"${host}" resolves to`} a ${verdict.range} address, which this server may not reach (the policy's http.allowPrivateCidrs does not allow it)`,
      );
  }
}

/** Every address `host` resolves to; a name that does not resolve in time is refused. */
function resolveAll(host: string, label: string, rules: InstanceRules): Promise<string[]> {
  const unresolvable = (why: string): ConnectionError =>
    refuse('GW_ERR_CONNECTION_INSTANCE_UNRESOLVABLE', `${label}: the host "${host}" ${why}`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(unresolvable(`did not resolve within ${rules.resolveTimeoutMs / 1000} s`)),
      rules.resolveTimeoutMs,
    );
    rules.resolve(host, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      if (err || !addresses || addresses.length === 0)
        return reject(
          unresolvable(
            `does not resolve${err?.code ? ` (${err.code})` : ''}: check the spelling, or whether it is only known inside another network`,
          ),
        );
      resolve(addresses.map((a) => a.address));
    });
  });
}
