/**
 * @module host/security-report/cases/header-smuggling
 * Plugin code shaping the request line and headers: CR, LF and NUL in header values, names, the
 * method and the URL; headers that carry credentials or steer routing (host, authorization,
 * cookie, forwarded, x-forwarded-*, proxy-*, sec-*), hop-by-hop and framing headers
 * (transfer-encoding, content-length, connection, upgrade, te, expect) that could split one
 * request into two; oversized and too many headers. Each must be refused before the request
 * leaves (the upstream receives nothing), or leave as one request with nothing injected.
 */
import type { AttackCase, Observation } from '../catalogue.js';

/** Sends args.init to args.url (default the echoing upstream) and returns what came back. */
const SEND = `async (ctx, args) => {
  const res = await ctx.http(args.url || 'https://api.attack.test/echo', args.init);
  return { status: res.status, body: res.body.slice(0, 300) };
}`;

const BAD_REQUEST = ['GW_ERR_BRIDGE_BAD_REQUEST'];

function refused(id: string, init: Record<string, unknown>, tries: string): AttackCase {
  return {
    id,
    class: 'header-smuggling',
    origin: 'new',
    tries,
    handler: SEND,
    args: { init },
    expected: { outcome: 'error', codes: BAD_REQUEST, upstreamAtMost: 0 },
  };
}

/** At most one request arrived, and none with the header the attack tried to inject. */
function nothingInjected(obs: Observation): string | undefined {
  if (obs.upstream.length > 1) return `the upstream received ${obs.upstream.length} requests: the request was split`;
  const smuggled = obs.upstream.find(
    (r) => 'x-injected' in r.headers || String(r.headers['host'] ?? '').includes('internal'),
  );
  return smuggled
    ? `the upstream received an injected header: ${JSON.stringify(smuggled.headers).slice(0, 200)}`
    : undefined;
}

function oneRequest(id: string, args: Record<string, unknown>, tries: string): AttackCase {
  return {
    id,
    class: 'header-smuggling',
    origin: 'new',
    tries,
    handler: SEND,
    args,
    expected: { outcome: 'any', upstreamAtMost: 1 },
    check: nothingInjected,
  };
}

const INJECT = 'x-injected: 1';

export const HEADER_SMUGGLING_CASES: AttackCase[] = [
  refused(
    'hs-lf-in-value',
    { headers: { 'x-note': `a\n${INJECT}` } },
    'A bare LF in a header value, to start a header of its own.',
  ),
  refused(
    'hs-cr-in-value',
    { headers: { 'x-note': `a\r${INJECT}` } },
    'A bare CR in a header value (some parsers end a line on it).',
  ),
  refused('hs-nul-in-value', { headers: { 'x-note': 'a\u0000b' } }, 'A NUL byte in a header value.'),
  refused('hs-crlf-in-name', { headers: { [`x-a\r\n${INJECT}\r\nx-b`]: '1' } }, 'CR LF inside a header name.'),
  refused('hs-space-in-name', { headers: { 'x a': '1' } }, 'A space inside a header name (obs-fold style smuggling).'),
  refused('hs-colon-in-name', { headers: { 'x-a:b': '1' } }, 'A colon inside a header name.'),
  refused(
    'hs-host-header',
    { headers: { host: 'internal.example' } },
    'A Host header of its own, to reach another virtual host.',
  ),
  refused(
    'hs-host-header-upper-case',
    { headers: { HOST: 'internal.example' } },
    'The Host header written in upper case.',
  ),
  refused(
    'hs-authorization-header',
    { headers: { authorization: 'Bearer attacker' } },
    'An Authorization header of its own, to replace the injected credential.',
  ),
  refused(
    'hs-authorization-as-pair',
    { headers: [['Authorization', 'Bearer attacker']] },
    'Authorization given as a [name, value] pair instead of an object key.',
  ),
  refused('hs-cookie-header', { headers: { cookie: 'session=attacker' } }, 'A Cookie header.'),
  refused(
    'hs-proxy-authorization',
    { headers: { 'proxy-authorization': 'Basic YTpi' } },
    'A Proxy-Authorization header.',
  ),
  refused(
    'hs-transfer-encoding',
    {
      method: 'POST',
      body: `0\r\n\r\nGET /admin HTTP/1.1\r\nHost: internal\r\n\r\n`,
      headers: { 'transfer-encoding': 'chunked' },
    },
    'Transfer-Encoding: chunked with a body that ends early and starts a second request.',
  ),
  refused(
    'hs-content-length',
    { method: 'POST', body: `GET /admin HTTP/1.1\r\nHost: internal\r\n\r\n`, headers: { 'content-length': '0' } },
    'Content-Length: 0 with a body holding a second request.',
  ),
  refused(
    'hs-connection-header',
    { headers: { connection: 'keep-alive, x-workbench-api-key' } },
    'A Connection header naming headers for a proxy to drop.',
  ),
  refused(
    'hs-upgrade-header',
    { headers: { upgrade: 'websocket', connection: 'upgrade' } },
    'An Upgrade to another protocol.',
  ),
  refused(
    'hs-te-and-expect',
    { headers: { te: 'trailers', expect: '100-continue' } },
    'TE and Expect, hop-by-hop headers that change framing.',
  ),
  refused(
    'hs-x-forwarded-for',
    { headers: { 'x-forwarded-for': '127.0.0.1' } },
    'X-Forwarded-For claiming the request comes from loopback.',
  ),
  refused(
    'hs-forwarded',
    { headers: { forwarded: 'for=127.0.0.1;host=internal' } },
    'A Forwarded header naming loopback and another host.',
  ),
  refused(
    'hs-x-original-url',
    { headers: { 'x-original-url': '/admin' } },
    'X-Original-URL, which some servers read as the path.',
  ),
  refused(
    'hs-sec-header',
    { headers: { 'sec-fetch-site': 'same-origin' } },
    'A Sec-Fetch-* header claiming a same-origin browser request.',
  ),
  refused(
    'hs-value-too-long',
    { headers: { 'x-long': 'v'.repeat(9000) } },
    'A header value longer than 8192 characters.',
  ),
  refused(
    'hs-too-many-headers',
    { headers: Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`x-h${i}`, '1'])) },
    'More than 64 headers.',
  ),
  refused(
    'hs-method-with-crlf',
    { method: 'GET /admin HTTP/1.1\r\nHost: internal\r\n\r\nGET' },
    'A method holding a whole request line.',
  ),
  refused('hs-method-connect', { method: 'CONNECT' }, 'The CONNECT method, to open a tunnel.'),
  refused(
    'hs-duplicate-name-other-case',
    {
      headers: [
        ['X-Dup', 'a'],
        ['x-dup', `b\r\n${INJECT}`],
      ],
    },
    'The same header twice in different cases, the second carrying CR LF.',
  ),
  oneRequest(
    'hs-crlf-in-url',
    { url: `https://api.attack.test/echo?a=1\r\n${INJECT}\r\n` },
    'CR LF inside the URL, to end the request line early.',
  ),
  oneRequest(
    'hs-unicode-truncating-to-crlf',
    { init: { headers: { 'x-note': `a\u010d\u010a${INJECT}` } } },
    'Characters whose low bytes are CR and LF (U+010D U+010A), for a stack that keeps one byte of each.',
  ),
];
