/**
 * @module test/security/hostile-redaction-forms.test
 * A hostile upstream hands the credential it was sent back to plugin code in every form the
 * gateway itself produces or an echo commonly takes (lower and upper case, percent-encoded by the
 * URL parser or byte for byte, a punycode host label, a scheme, base64 of the key and of
 * `user:key` in lower case, base64url) and in every place plugin code can see (body as text and as
 * bytes, header values, header names, status text, the final URL after a redirect, a Location it
 * is handed, a bridge error). A real plugin in the real sandbox returns all it saw; no form of
 * either secret is in it, read every way plugin code could decode it, nor in any response body or
 * log line, and no bridge error quotes the upstream's redirect target.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type RecordedRequest, type Upstream, type UpstreamReply } from '../helpers/upstream.js';
import {
  findFoldedSecrets,
  startSecurityGateway,
  type Json,
  type SecurityGateway,
} from '../helpers/security-gateway.js';

/** a checksummed-token-like key: letters of both cases and digits, so it fits a host label, a scheme and a header name */
const KEY = `Ghp${[...randomBytes(24)].map((b) => 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'[b % 57]).join('')}`;
/** a user name with characters the URL parser percent-encodes (space, quote) and some it leaves (/ + =) */
const USER = `Sk-${randomBytes(4).toString('hex')} Qx/Ab+Cd=Ef"Gh`;
const BASIC = Buffer.from(`${USER}:${KEY}`).toString('base64');
const SECRETS = [KEY, USER, BASIC];

interface Credential {
  user: string;
  key: string;
  basic: string;
}
const CREDENTIAL: Credential = { user: USER, key: KEY, basic: BASIC };

/** The credential the bridge injected, as the upstream reads it from `Authorization: Basic …`. */
function credentialOf(req: RecordedRequest): Credential {
  const basic = String(req.headers.authorization ?? '').replace(/^Basic /, '');
  const text = Buffer.from(basic, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return { user: text.slice(0, colon), key: text.slice(colon + 1), basic };
}

/** form → the text the upstream writes where it writes text */
const FORMS: Record<string, (c: Credential) => string> = {
  'lower case': (c) => c.key.toLowerCase(),
  'upper case': (c) => c.key.toUpperCase(),
  'percent-encoded as a URL path': (c) => new URL(`https://h.example/${c.user}`).pathname.slice(1),
  'percent-encoded byte for byte': (c) => [...Buffer.from(c.user)].map((b) => `%${b.toString(16)}`).join(''),
  'a punycode host label': (c) => domainToASCII(`${c.key}\u00fc`),
  'base64 in lower case': (c) => Buffer.from(c.key).toString('base64').toLowerCase(),
  base64url: (c) => Buffer.from(c.key).toString('base64url'),
  'base64 of user:key in lower case': (c) => c.basic.toLowerCase(),
};
type Form = keyof typeof FORMS;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** place → what the upstream answers to put the form there (undefined: the form cannot go there) */
const PLACES: Record<string, (form: Form, c: Credential) => UpstreamReply | undefined> = {
  'the body as text': (form, c) => ({ body: `echo: ${FORMS[form]?.(c)}`, headers: { 'content-type': 'text/plain' } }),
  'the body as bytes': (form, c) => ({
    body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`echo: ${FORMS[form]?.(c)}`)]),
    headers: { 'content-type': 'application/octet-stream' },
  }),
  'a header value': (form, c) => ({ headers: { 'x-echo': String(FORMS[form]?.(c)) } }),
  'a header value sent twice (joined by undici)': (form, c) => ({
    headers: { 'x-echo': [String(FORMS[form]?.(c)), String(FORMS[form]?.(c))] },
  }),
  // undici lower-cases every name: an upper-case form comes back lower-cased
  'a header name': (form, c) => {
    const name = `x-${FORMS[form]?.(c)}`;
    return HEADER_NAME.test(name) ? { headers: { [name]: '1' } } : undefined;
  },
  'the status text': (form, c) => ({ statusText: `OK ${FORMS[form]?.(c)}` }),
  // followed: the final URL is res.url; a path the URL parser encodes is written raw
  'the final URL after a redirect': (form, c) => ({
    status: 302,
    headers: { location: `/after/${form === 'percent-encoded as a URL path' ? c.user : FORMS[form]?.(c)}` },
  }),
  // 300 is not followed: plugin code reads the Location, which the bridge has parsed (host lower-cased or punycoded)
  'a Location handed to plugin code': (form, c) => ({ status: 300, headers: { location: inUrl(form, c) } }),
};

/** A URL whose parsing makes the form: the key as a host label (lower-cased, or punycoded with a ü), the user raw in a path. */
function inUrl(form: Form, c: Credential): string {
  if (form === 'lower case') return `https://${c.key}.elsewhere.example/`;
  if (form === 'a punycode host label') return `https://${c.key}\u00fc.elsewhere.example/`;
  if (form === 'percent-encoded as a URL path') return `https://elsewhere.example/${c.user}`;
  return `https://elsewhere.example/${FORMS[form]?.(c)}`;
}

/** redirects the bridge refuses, each to a target built from the key; the error must carry none of it */
const REFUSED_REDIRECTS: Record<string, (c: Credential) => string> = {
  'an undeclared host named after the key (lower-cased by the parser)': (c) => `https://${c.key}.elsewhere.example/`,
  'an undeclared host named after the key (punycoded by the parser)': (c) =>
    `https://${c.key}\u00fc.elsewhere.example/`,
  'a scheme named after the key (lower-cased by the parser)': (c) => `${c.key}:elsewhere`,
};

/** Every string in a JSON value, and the value as JSON text. */
function textsOf(value: Json): string[] {
  const out = [JSON.stringify(value)];
  const walk = (v: Json): void => {
    if (typeof v === 'string') out.push(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(value);
  return out;
}

describe('a hostile upstream handing the credential back in every form and place', () => {
  let gw: SecurityGateway;
  let up: Upstream;
  let apiKey: string;

  before(async () => {
    up = await startUpstream((req) => {
      const [, kind, place, form] = req.path.split('/').map(decodeURIComponent);
      if (kind === 'after') return { body: 'after the redirect' };
      const c = credentialOf(req);
      if (kind === 'refused')
        return { status: 302, headers: { location: REFUSED_REDIRECTS[String(place)]?.(c) ?? '/' } };
      return PLACES[String(place)]?.(form as Form, c) ?? { status: 404 };
    });
    gw = await startSecurityGateway({
      upstreams: { 'https://api.hostile.test': up.origin },
      policy: { requests: { maxBatch: 100 } },
    });
    const { user, apiKey: key } = await gw.createUser('mirror@example.com');
    apiKey = key;
    await gw.connect('hostile-mirror', user, undefined, { values: { user: USER, key: KEY } });
  });

  after(async () => {
    await gw?.close();
    await up?.close();
  });

  const fetchAll = (paths: string[]): Promise<Json[]> =>
    gw.batch(
      'hostile-mirror',
      paths.map((path) => ({ tool: 'mirror_fetch', args: { path } })),
      apiKey,
    );

  for (const place of Object.keys(PLACES))
    it(`redacts every form in ${place}`, async () => {
      const forms = Object.keys(FORMS).filter((form) => PLACES[place]?.(form, CREDENTIAL) !== undefined);
      const items = await fetchAll(
        forms.map((form) => `/case/${encodeURIComponent(place)}/${encodeURIComponent(form)}`),
      );
      items.forEach((item, i) => {
        const seen = item.result;
        assert.ok(
          seen && seen.status !== undefined && seen.error === undefined,
          `${forms[i]}: ${JSON.stringify(item).slice(0, 400)}`,
        );
        assert.match(
          JSON.stringify(seen),
          /\[REDACTED\]/i,
          `${forms[i]}: the upstream's echo reached the plugin, redacted`,
        );
        assert.deepEqual(findFoldedSecrets(textsOf(seen), SECRETS), [], `${forms[i]} in ${place}`);
      });
    });

  it("redacts the credential from bridge errors and quotes none of the upstream's redirect target in them", async () => {
    const cases = Object.keys(REFUSED_REDIRECTS);
    const items = await fetchAll(cases.map((c) => `/refused/${encodeURIComponent(c)}`));
    items.forEach((item, i) => {
      const seen = item.result;
      assert.match(
        String(seen?.code),
        /^GW_ERR_BRIDGE_(HOST|SCHEME)_NOT_ALLOWED$/,
        `${cases[i]}: ${JSON.stringify(item).slice(0, 400)}`,
      );
      assert.match(
        seen.error,
        /^HttpError: GW_ERR_BRIDGE_[A-Z_]+: redirect hop 1: the redirect's (host|scheme) is not/,
        cases[i],
      );
      assert.doesNotMatch(
        JSON.stringify(seen),
        /elsewhere/i,
        `${cases[i]}: the message names the rule, not the upstream's target`,
      );
      assert.deepEqual(findFoldedSecrets(textsOf(seen), SECRETS), [], cases[i]);
    });
  });

  it('leaves no form of the credential in any response body or log line', () => {
    assert.ok(
      up.requests.some((r) => credentialOf(r).key === KEY),
      'the bridge injected the credential upstream',
    );
    const hits = findFoldedSecrets([...gw.bodies, ...gw.logs], SECRETS);
    assert.deepEqual(hits, [], hits.join('\n'));
  });
});
