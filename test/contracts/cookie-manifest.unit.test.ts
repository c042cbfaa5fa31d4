/**
 * @module test/contracts/cookie-manifest.unit.test
 * A manifest's cookie auth (`{type: "cookie", loginUrl, domains, signedInCheck?, instructions?}`)
 * is checked as data before anything is registered: every bad shape is refused with the field
 * and the problem, as `workbench plugin validate` and start-up read it (loadPluginDir); a good one
 * is accepted, and its cookies go only to the egress hosts within its domains.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { credentialHosts, describeIssues, manifestSchema, withinDomains } from '../../contracts/manifest.js';
import { loadPluginDir } from '../../host/registry/load-plugins.js';

const GOOD_AUTH = {
  type: 'cookie',
  loginUrl: 'https://accounts.example.com/login?next=%2F',
  domains: ['example.com'],
};

function manifest(auth: Record<string, unknown>, egress = ['api.example.com', 'static.other.net']): unknown {
  return {
    name: 'cookied',
    version: '1.0.0',
    displayName: 'Cookied',
    description: 'A cookie connection under test.',
    auth,
    egress,
    tools: [{ name: 'cookied_get', description: 'Gets.', inputSchema: { type: 'object' } }],
  };
}

/** The problems the schema names for `auth` (and `egress`), as one line. */
function problems(auth: Record<string, unknown>, egress?: string[]): string {
  const r = manifestSchema.safeParse(manifest(auth, egress));
  return r.success ? '' : describeIssues(r.error);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-cookie-manifest-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** The message the gateway (and `workbench plugin validate`) gives for a plugin folder holding the manifest. */
function loadError(auth: Record<string, unknown>, egress?: string[]): string {
  const dir = fs.mkdtempSync(path.join(root, 'cookied-'));
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ ...(manifest(auth, egress) as object) }));
  fs.writeFileSync(path.join(dir, 'plugin.js'), 'export default { cookied_get: async () => 1 };');
  try {
    loadPluginDir(dir);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('cookie auth in a manifest', () => {
  it('a good one is accepted, with its defaults, and sends cookies to the egress hosts within its domains only', () => {
    const r = manifestSchema.parse(
      manifest({ ...GOOD_AUTH, signedInCheck: { cookies: ['sid', '__Host-x'] }, instructions: 'Use SSO.' }),
    );
    assert.equal(r.auth.type, 'cookie');
    assert.deepEqual(credentialHosts(r), ['api.example.com']);
    assert.equal(loadError(GOOD_AUTH), '');
    assert.ok(withinDomains('a.b.example.com', ['example.com']));
    assert.ok(!withinDomains('badexample.com', ['example.com']), 'a suffix is not a subdomain');
    assert.ok(!withinDomains('example.com', ['api.example.com']), 'a parent is not within its subdomain');
  });

  const bad: Array<[string, Record<string, unknown>, RegExp, string[]?]> = [
    ['no loginUrl', { type: 'cookie', domains: ['example.com'] }, /auth\.loginUrl: must be an https URL/],
    [
      'an http loginUrl',
      { ...GOOD_AUTH, loginUrl: 'http://accounts.example.com/login' },
      /auth\.loginUrl: must be an https URL/,
    ],
    [
      'a loginUrl that is no URL',
      { ...GOOD_AUTH, loginUrl: 'accounts.example.com/login' },
      /auth\.loginUrl: must be an https URL/,
    ],
    [
      'a loginUrl outside the domains',
      { ...GOOD_AUTH, loginUrl: 'https://login.other.net/' },
      /auth\.loginUrl: its host "login\.other\.net" is not within domains \(example\.com\)/,
    ],
    [
      'a loginUrl whose host is no host name',
      { ...GOOD_AUTH, loginUrl: 'https://[::1]/login' },
      /auth\.loginUrl: its host "\[::1\]" must be a DNS host name within domains/,
    ],
    [
      'a loginUrl with a password',
      { ...GOOD_AUTH, loginUrl: 'https://u:p@accounts.example.com/' },
      /auth\.loginUrl: must not carry a user name or password/,
    ],
    ['no domains', { type: 'cookie', loginUrl: GOOD_AUTH.loginUrl }, /auth\.domains: /],
    ['empty domains', { ...GOOD_AUTH, domains: [] }, /auth\.domains: list at least one domain/],
    [
      'a domain with a scheme',
      { ...GOOD_AUTH, domains: ['https://example.com'] },
      /auth\.domains\.0: must be a lower-case DNS host name/,
    ],
    [
      'a wildcard domain',
      { ...GOOD_AUTH, domains: ['*.example.com'] },
      /auth\.domains\.0: must be a lower-case DNS host name/,
    ],
    [
      'an upper-case domain',
      { ...GOOD_AUTH, domains: ['Example.com'] },
      /auth\.domains\.0: must be a lower-case DNS host name/,
    ],
    [
      'a one-label domain',
      { ...GOOD_AUTH, loginUrl: 'https://com/', domains: ['com'] },
      /auth\.domains\.0: must have two labels or more/,
    ],
    [
      'a domain egress does not reach',
      { ...GOOD_AUTH, domains: ['example.com', 'elsewhere.org'] },
      /auth\.domains\.1: "elsewhere\.org" is not covered by egress/,
    ],
    [
      'a domain whose hosts egress does not list (only its parent)',
      { ...GOOD_AUTH, loginUrl: 'https://app.example.com/', domains: ['app.example.com'] },
      /auth\.domains\.0: "app\.example\.com" is not covered by egress/,
    ],
    [
      'a domain listed twice',
      { ...GOOD_AUTH, domains: ['example.com', 'example.com'] },
      /auth\.domains\.1: "example\.com" is listed twice/,
    ],
    ['an empty signedInCheck', { ...GOOD_AUTH, signedInCheck: { cookies: [] } }, /auth\.signedInCheck\.cookies: /],
    ['a signedInCheck that is a name', { ...GOOD_AUTH, signedInCheck: 'sid' }, /auth\.signedInCheck: /],
    [
      'a cookie name with "="',
      { ...GOOD_AUTH, signedInCheck: { cookies: ['a=b'] } },
      /auth\.signedInCheck\.cookies\.0: must be a cookie name/,
    ],
    [
      'an unknown signedInCheck key',
      { ...GOOD_AUTH, signedInCheck: { cookies: ['sid'], url: '/me' } },
      /auth\.signedInCheck: Unrecognized key: "url"/,
    ],
    [
      'an inject (the Cookie header is fixed)',
      { ...GOOD_AUTH, inject: { header: 'cookie' } },
      /auth: Unrecognized key: "inject"/,
    ],
    ['too long instructions', { ...GOOD_AUTH, instructions: 'x'.repeat(2001) }, /auth\.instructions: /],
  ];
  for (const [name, auth, expected, egress] of bad)
    it(`refuses ${name}, naming the field`, () => {
      assert.match(problems(auth, egress), expected);
      assert.match(loadError(auth, egress), expected, 'start-up and `workbench plugin validate` say the same');
    });
});
