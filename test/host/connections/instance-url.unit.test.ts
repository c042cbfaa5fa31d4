/**
 * @module test/host/connections/instance-url.unit.test
 * A connection's own instance as checked at connect time (host/connections/instance-url.ts), with
 * the bridge's address rules and a stub resolver: what is taken (an https origin, with a port, a
 * bare host name, the default's own URL as the default, an origin the policy maps), and what is
 * refused with which catalogue code (not https, user information, a path, a query or fragment,
 * a private, loopback, link-local or metadata address without a policy allowance, a denied host,
 * a name that does not resolve, an integration that takes no instance). Then the manifest's rules
 * for `auth.instance` and `auth.personalToken`, and the per-instance OAuth clients from the
 * environment.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manifestSchema, describeIssues, type PluginManifest } from '../../../contracts/manifest.js';
import { checkInstanceUrl, instanceRulesOf, type InstanceRules } from '../../../host/connections/instance-url.js';
import { clientFromEnv, oauthForInstance } from '../../../host/connections/oauth.js';
import { isConnectionError } from '../../../host/connections/errors.js';
import { fakeResolver } from '../../helpers/sandbox/fake-dns.js';

const DNS = {
  'gitlab.example.com': ['93.184.216.34'],
  'gitlab.v6.example.com': ['2606:2800:220:1::1'],
  'intranet.example.com': ['10.1.2.3'],
  'rebind.example.com': ['93.184.216.34', '169.254.169.254'],
  localhost: ['127.0.0.1'],
  'mapped.example.com': ['10.9.9.9'],
};

const withInstance = (extra: Record<string, unknown> = {}): PluginManifest =>
  manifestSchema.parse({
    name: 'selfhost',
    version: '1.0.0',
    displayName: 'SelfHost',
    description: 'A self-hostable provider',
    auth: {
      type: 'oauth2',
      authorizationUrl: 'https://gitlab.com/oauth/authorize',
      tokenUrl: 'https://gitlab.com/oauth/token',
      instance: { default: 'https://gitlab.com', label: 'Instance URL' },
      ...extra,
    },
    egress: ['gitlab.com'],
    tools: [{ name: 'selfhost_ping', description: 'Ping', inputSchema: { type: 'object', properties: {} } }],
  });

const rules = (policy: { allowHttpInstances?: boolean; allowPrivateCidrs?: string[]; denyHosts?: string[] } = {}) =>
  instanceRulesOf(
    { allowPrivateCidrs: [], denyHosts: [], ...policy },
    { 'https://mapped.example.com': 'http://127.0.0.1:9' },
    fakeResolver(DNS),
  );

/** The catalogue code and the message a refusal carries (and that it names the field). */
async function refusal(raw: unknown, r: InstanceRules = rules(), m = withInstance()): Promise<[string, string]> {
  try {
    await checkInstanceUrl(m, raw, r);
  } catch (err) {
    assert.ok(isConnectionError(err), String(err));
    assert.equal(err.fields['instanceUrl'], err.message, 'the message is the instance field’s');
    return [err.code, err.message];
  }
  assert.fail(`${String(raw)} was taken`);
}

describe('an instance URL at connect time', () => {
  it('takes an https origin (a port, a bare host name, a trailing slash), and the default’s own URL as the default', async () => {
    const m = withInstance();
    for (const [raw, origin] of [
      ['https://gitlab.example.com', 'https://gitlab.example.com'],
      ['https://GitLab.Example.com/', 'https://gitlab.example.com'],
      ['  https://gitlab.example.com:8443  ', 'https://gitlab.example.com:8443'],
      ['gitlab.example.com', 'https://gitlab.example.com'],
      ['https://gitlab.example.com:443', 'https://gitlab.example.com'],
      ['https://gitlab.v6.example.com', 'https://gitlab.v6.example.com'],
      ['https://93.184.216.34', 'https://93.184.216.34'],
      // the operator named it in upstreams: reached as named, as the bridge does
      ['https://mapped.example.com', 'https://mapped.example.com'],
    ] as const)
      assert.equal(await checkInstanceUrl(m, raw, rules()), origin, raw);
    for (const raw of [undefined, null, '', '   ', 'https://gitlab.com', 'https://gitlab.com/', 'gitlab.com'])
      assert.equal(await checkInstanceUrl(m, raw, rules()), undefined, String(raw));
  });

  it('refuses what is not an https origin, saying which part is wrong', async () => {
    for (const [raw, says] of [
      ['http://gitlab.example.com', /must be an https address, not http/],
      ['ftp://gitlab.example.com', /must be an https address, not ftp/],
      ['https://user:secret@gitlab.example.com', /must not carry a user name or password/],
      ['https://token@gitlab.example.com', /must not carry a user name or password/],
      ['https://gitlab.example.com/gitlab', /without a path \(https:\/\/gitlab\.example\.com, not …\/gitlab\)/],
      ['https://gitlab.example.com/api/v4/', /without a path/],
      ['https://gitlab.example.com/?private_token=x', /without a query or fragment/],
      ['https://gitlab.example.com?', /without a query or fragment/],
      ['https://gitlab.example.com#top', /without a query or fragment/],
      ['https://gitlab example.com', /must not contain spaces/],
      ['https://[::1', /is not a URL/],
      [42, /must be text/],
      [`https://${'a'.repeat(300)}.com`, /too long/],
    ] as const) {
      const [code, message] = await refusal(raw);
      assert.equal(code, 'GW_ERR_CONNECTION_INSTANCE_INVALID', String(raw));
      assert.match(message, /^Instance URL: /);
      assert.match(message, says, String(raw));
    }
  });

  it('refuses private, loopback, link-local and metadata addresses unless the policy allows their range', async () => {
    for (const [raw, range] of [
      ['https://169.254.169.254', /169\.254\.169\.254 is a linkLocal address/],
      ['https://127.0.0.1:8443', /127\.0\.0\.1 is a loopback address/],
      ['https://[::1]', /\[::1\] is a loopback address/],
      ['https://[::ffff:7f00:1]', /loopback address/],
      ['https://10.0.0.5', /10\.0\.0\.5 is a private address/],
      ['https://2130706433', /127\.0\.0\.1 is a loopback address/],
      ['https://localhost', /"localhost" resolves to a loopback address/],
      ['https://intranet.example.com', /"intranet\.example\.com" resolves to a private address/],
      // one address of several is enough
      ['https://rebind.example.com', /"rebind\.example\.com" resolves to a linkLocal address/],
    ] as const) {
      const [code, message] = await refusal(raw);
      assert.equal(code, 'GW_ERR_CONNECTION_INSTANCE_BLOCKED', raw);
      assert.match(message, range, raw);
      assert.match(message, /http\.allowPrivateCidrs/);
    }
    const allowing = rules({ allowPrivateCidrs: ['10.0.0.0/8', '127.0.0.0/8'] });
    assert.equal(
      await checkInstanceUrl(withInstance(), 'https://intranet.example.com', allowing),
      'https://intranet.example.com',
    );
    assert.equal(await checkInstanceUrl(withInstance(), 'https://127.0.0.1:8443', allowing), 'https://127.0.0.1:8443');
    // an allowance for private ranges is no allowance for the metadata address
    assert.equal((await refusal('https://169.254.169.254', allowing))[0], 'GW_ERR_CONNECTION_INSTANCE_BLOCKED');
  });

  it('takes http only where the policy allows http instances, under the same address rules', async () => {
    const httpOk = rules({ allowHttpInstances: true, allowPrivateCidrs: ['127.0.0.0/8'] });
    assert.equal(await checkInstanceUrl(withInstance(), 'http://127.0.0.1:8080', httpOk), 'http://127.0.0.1:8080');
    assert.match((await refusal('ftp://gitlab.example.com', httpOk))[1], /must be an https \(or http\) address/);
    assert.equal(
      (await refusal('http://10.0.0.5', rules({ allowHttpInstances: true })))[0],
      'GW_ERR_CONNECTION_INSTANCE_BLOCKED',
    );
  });

  it('refuses a denied host, a name that does not resolve, and an instance for an integration that takes none', async () => {
    const [denied, deniedText] = await refusal(
      'https://gitlab.example.com',
      rules({ denyHosts: ['gitlab.example.com'] }),
    );
    assert.equal(denied, 'GW_ERR_CONNECTION_INSTANCE_BLOCKED');
    assert.match(deniedText, /"gitlab\.example\.com" is denied by the server's policy/);
    const [unknown, unknownText] = await refusal('https://gitlab.nowhere.invalid');
    assert.equal(unknown, 'GW_ERR_CONNECTION_INSTANCE_UNRESOLVABLE');
    assert.match(unknownText, /the host "gitlab\.nowhere\.invalid" does not resolve \(ENOTFOUND\)/);
    const slow: InstanceRules = { ...rules(), resolve: () => undefined, resolveTimeoutMs: 20 };
    assert.match((await refusal('https://gitlab.example.com', slow))[1], /did not resolve within 0\.02 s/);
    const plain = manifestSchema.parse({ ...withInstance(), auth: { ...withInstance().auth, instance: undefined } });
    const [none, noneText] = await refusal('https://gitlab.example.com', rules(), plain);
    assert.equal(none, 'GW_ERR_CONNECTION_INSTANCE_INVALID');
    assert.match(noneText, /SelfHost takes no instance URL/);
  });
});

describe('the manifest’s instance and personal token', () => {
  const problems = (auth: Record<string, unknown>, egress = ['gitlab.com']): string => {
    const r = manifestSchema.safeParse({
      ...withInstance(),
      auth: { ...withInstance().auth, ...auth },
      egress,
    });
    return r.success ? '' : describeIssues(r.error);
  };

  it('wants the default an https origin whose host gets the credential, and OAuth paths that are paths', () => {
    assert.equal(problems({}), '');
    assert.match(
      problems({ instance: { default: 'http://gitlab.com', label: 'x' } }),
      /auth\.instance\.default: must be an https origin/,
    );
    assert.match(problems({ instance: { default: 'https://gitlab.com/api', label: 'x' } }), /must be an https origin/);
    assert.match(
      problems({ instance: { default: 'https://gitlab.org', label: 'x' } }),
      /auth\.instance\.default: its host "gitlab\.org" must be in egress/,
    );
    assert.match(
      problems({
        instance: { default: 'https://gitlab.com', label: 'x', oauth: { authorizationPath: 'oauth', tokenPath: '/t' } },
      }),
      /auth\.instance\.oauth\.authorizationPath: must be a path starting with "\/"/,
    );
    assert.match(
      problems({
        instance: {
          default: 'https://gitlab.com',
          label: 'x',
          oauth: { authorizationPath: '/a/../b', tokenPath: '/t?x=1' },
        },
      }),
      /must not start with "\/\/" or hold "\.\."; auth\.instance\.oauth\.tokenPath: must be a path/,
    );
    assert.match(problems({ personalToken: { label: '' } }), /auth\.personalToken\.label/);
  });

  it('keeps ctx.config.instanceUrl the instance’s, and OAuth endpoints for OAuth2 only', () => {
    const keyed = (fields: unknown[], instance: Record<string, unknown>) =>
      manifestSchema.safeParse({
        ...withInstance(),
        auth: { type: 'apikey', fields, inject: { format: 'Bearer {k}' }, instance },
      });
    const clash = keyed(
      [
        { name: 'k', label: 'Key', secret: true },
        { name: 'instanceUrl', label: 'URL' },
      ],
      { default: 'https://gitlab.com', label: 'x' },
    );
    assert.ok(!clash.success);
    assert.match(describeIssues(clash.error), /no field may be named "instanceUrl"/);
    const oauthOnKey = keyed([{ name: 'k', label: 'Key', secret: true }], {
      default: 'https://gitlab.com',
      label: 'x',
      oauth: { authorizationPath: '/a', tokenPath: '/t' },
    });
    assert.ok(!oauthOnKey.success);
    assert.match(describeIssues(oauthOnKey.error), /auth\.instance\.oauth: is for OAuth2 integrations only/);
  });

  it('derives an instance’s OAuth endpoints from its origin, and none without declared paths', () => {
    const m = withInstance({
      revocationUrl: 'https://gitlab.com/oauth/revoke',
      instance: {
        default: 'https://gitlab.com',
        label: 'x',
        oauth: { authorizationPath: '/oauth/authorize', tokenPath: '/oauth/token' },
      },
    });
    assert.ok(m.auth.type === 'oauth2');
    assert.equal(oauthForInstance(m.auth, undefined), m.auth);
    const at = oauthForInstance(m.auth, 'https://gitlab.example.com:8443');
    assert.equal(at?.authorizationUrl, 'https://gitlab.example.com:8443/oauth/authorize');
    assert.equal(at?.tokenUrl, 'https://gitlab.example.com:8443/oauth/token');
    assert.equal(at?.revocationUrl, undefined, "the default's revocation URL is not the instance's");
    const bare = withInstance();
    assert.ok(bare.auth.type === 'oauth2');
    assert.equal(oauthForInstance(bare.auth, 'https://gitlab.example.com'), undefined);
  });
});

describe('OAuth clients registered on instances', () => {
  it('are read per plugin, keyed by exact origin; the default’s client never stands in for an instance', () => {
    const clientFor = clientFromEnv({
      SELFHOST_CLIENT_ID: 'default-id',
      SELFHOST_CLIENT_SECRET: 'default-secret',
      SELFHOST_INSTANCE_CLIENTS: JSON.stringify({
        'https://GitLab.Example.com/': { clientId: 'inst-id', clientSecret: 'inst-secret' },
        'https://gitlab.example.com:8443': { clientId: 'public-id' },
      }),
    });
    assert.deepEqual(clientFor('selfhost'), { clientId: 'default-id', clientSecret: 'default-secret' });
    assert.deepEqual(clientFor('selfhost', 'https://gitlab.example.com'), {
      clientId: 'inst-id',
      clientSecret: 'inst-secret',
    });
    assert.deepEqual(clientFor('selfhost', 'https://gitlab.example.com:8443'), { clientId: 'public-id' });
    assert.equal(clientFor('selfhost', 'https://gitlab-example.com'), undefined);
    assert.equal(clientFor('selfhost', 'https://other.example.com'), undefined);
    assert.equal(clientFor('other', 'https://gitlab.example.com'), undefined);
  });

  it('stop start-up with GW_ERR_CONFIG_INVALID naming the variable when the map is not one', () => {
    for (const [value, says] of [
      ['{not json', /SELFHOST_INSTANCE_CLIENTS: is not valid JSON/],
      ['[]', /is not a JSON object/],
      ['{"gitlab.example.com": {"clientId": "x"}}', /"gitlab\.example\.com" is not an instance origin/],
      ['{"https://gitlab.example.com/gitlab": {"clientId": "x"}}', /is not an instance origin/],
      [
        '{"https://gitlab.example.com": {"clientSecret": "x"}}',
        /the client of https:\/\/gitlab\.example\.com has no clientId/,
      ],
      ['{"https://gitlab.example.com": {"clientId": "x", "secret": "y"}}', /has unknown keys \(secret\)/],
    ] as const)
      assert.throws(
        () => clientFromEnv({ SELFHOST_INSTANCE_CLIENTS: value }),
        (err: Error & { code?: string }) => err.code === 'GW_ERR_CONFIG_INVALID' && says.test(err.message),
        value,
      );
  });
});
