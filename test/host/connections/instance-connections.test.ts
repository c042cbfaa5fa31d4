/**
 * @module test/host/connections/instance-connections.test
 * Connections to a provider's own instance through the real gateway (a real SQLite file, the
 * sandbox, the portal over HTTP, MCP), with loopback servers standing in for the instances (the
 * test policy allows 127.0.0.0/8 and http instances, as a trusted network would) and for the
 * provider's default host (api.fixture.test, through upstreams). Two fixture plugins of a
 * self-hostable provider: OAuth2 with a personal token, and an API key.
 *   - a personal token entered on the connect page with an instance URL: the plugin gets the
 *     instance in ctx.config, its requests reach the instance with the token, a request to the
 *     default host from that connection gets none, and the portal and list_integrations show it;
 *   - bad instance URLs are refused on the page with the catalogue's words, the link left unused;
 *     the agent's connect checks the one it names and the page shows it as a suggestion;
 *   - the OAuth round trip against an instance: its own authorize and token endpoints, the client
 *     registered there (<PLUGIN>_INSTANCE_CLIENTS), refresh and revocation there too, and an
 *     instance without a registered client refused with what to do instead;
 *   - an API-key connection with an instance; a re-import that keeps it, and one that goes back
 *     to the default;
 *   - a row whose plain instance was changed outside the gateway: the credential, sealed for
 *     another instance, is not used and nothing reaches the new host.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startMockOAuth, type MockOAuth } from '../../helpers/mock-oauth.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { csrfOf, signInWithKey, type Answer, type WebClient } from '../../helpers/web-client.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'instance-plugins');
const PAT = 'pat-instance-test-0123456789';
type Json = Record<string, any>;

describe('connections to a provider’s own instance', () => {
  let gw: TestGateway;
  let instance: Upstream;
  let cloud: Upstream;
  let mock: MockOAuth;
  let web: WebClient;

  before(async () => {
    const echo = (req: { path: string; headers: Record<string, unknown> }) => ({
      json: { path: req.path, authorized: req.headers['authorization'] !== undefined },
    });
    instance = await startUpstream(echo);
    cloud = await startUpstream(echo);
    mock = await startMockOAuth({
      paths: { authorize: '/oauth/authorize', token: '/oauth/token', revoke: '/oauth/revoke' },
    });
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      upstreams: { 'https://api.fixture.test': cloud.origin },
      policy: { http: { allowPrivateCidrs: ['127.0.0.0/8'], allowHttpInstances: true } },
      env: {
        FIXTURE_INSTANCE_INSTANCE_CLIENTS: JSON.stringify({
          [mock.origin]: { clientId: mock.clientId, clientSecret: mock.clientSecret },
        }),
      },
    });
    web = await signInWithKey(gw.url, gw.apiKey);
  });
  after(async () => {
    await gw.close();
    await Promise.all([instance.close(), cloud.close(), mock.close()]);
  });

  /** A new connect link for `integration` from the integrations page; its page. */
  const newLink = async (integration: string): Promise<{ id: string; page: Answer }> => {
    const list = await web.get('/integrations');
    const made = await web.post(`/integrations/${integration}/connect`, { _csrf: csrfOf(list.body) });
    assert.equal(made.status, 303, made.body.slice(0, 300));
    const id = /^\/connect\/([A-Za-z0-9_-]+)$/.exec(made.location ?? '')?.[1] ?? '';
    assert.ok(id, made.location ?? '');
    return { id, page: await web.get(`/connect/${id}`) };
  };
  const stored = async (integration: string) =>
    gw.db.get<{ instance_url: string | null; secret: string; status: string }>(
      'SELECT instance_url, secret, status FROM connections WHERE user_id = ? AND integration = ?',
      [gw.user.id, integration],
    );

  it('a personal token for an instance, entered on the connect page: its requests go there with it, and the default host gets none', async () => {
    const { id, page } = await newLink('fixture-instance');
    assert.equal(page.status, 200);
    assert.match(
      page.body,
      /<label for="f-instanceUrl">Fixture instance URL <span class="hint">\(optional\)<\/span><\/label>/,
    );
    assert.match(page.body, /placeholder="https:\/\/api\.fixture\.test"/);
    assert.match(page.body, /<button type="submit" name="method" value="oauth">Continue to Fixture Instance<\/button>/);
    assert.match(page.body, /<input type="password"[^>]* id="f-token" name="token"/);
    assert.ok(
      page.body.includes(`Sign-in is set up for ${mock.origin}; for another instance, use a token.`),
      'the instances with a registered client are named',
    );
    const done = await web.post(`/connect/${id}`, {
      _csrf: csrfOf(page.body),
      instanceUrl: `${instance.origin}/`,
      token: ` ${PAT} `,
      method: 'token',
    });
    assert.equal(done.status, 303, done.body.slice(0, 500));
    assert.match((await web.get(`/connect/${id}`)).body, /Fixture Instance<\/strong>: is connected/);
    const row = await stored('fixture-instance');
    assert.equal(row?.instance_url, instance.origin);
    assert.ok(row && !row.secret.includes(PAT), 'the token is sealed');

    const at = await gw.execute('instance_get', { url: '/api/v4/user' });
    assert.equal(at.result?.status, 200, JSON.stringify(at));
    assert.equal(at.result.instanceUrl, instance.origin, 'the plugin gets the instance in ctx.config');
    assert.equal(instance.last().path, '/api/v4/user');
    assert.equal(instance.last().headers['authorization'], `Bearer ${PAT}`);

    const before = cloud.requests.length;
    const home = await gw.execute('instance_get', { url: 'https://api.fixture.test/api/v4/user' });
    assert.equal(home.result?.status, 200, JSON.stringify(home));
    assert.equal(cloud.requests.length, before + 1);
    assert.equal(cloud.last().headers['authorization'], undefined, 'the default host gets no credential');

    const elsewhere = await gw.execute('instance_get', { url: 'https://evil.example.net/steal' });
    assert.match(String(elsewhere.error), /not declared in the plugin's egress/);

    const list = await web.get('/integrations');
    const hostPort = new URL(instance.origin).host;
    assert.match(
      list.body,
      new RegExp(`<span class="ok">Connected</span><p class="hint">at <span class="instance">${hostPort}</span></p>`),
    );
    const client = await gw.mcpClient();
    const listed = await client.callTool({ name: 'list_integrations', arguments: {} });
    const entry = (JSON.parse((listed.content as Array<{ text: string }>)[0]!.text) as Json)['integrations'].find(
      (i: Json) => i['name'] === 'fixture-instance',
    );
    assert.equal(entry.connection, 'connected');
    assert.equal(entry.instance, instance.origin);
  });

  it('refuses bad instance URLs on the connect page with the catalogue’s words, and leaves the link unused', async () => {
    const { id, page } = await newLink('fixture-instance');
    const csrf = csrfOf(page.body);
    for (const [url, says] of [
      [
        'https://169.254.169.254',
        /Fixture instance URL: 169\.254\.169\.254 is a linkLocal address, which this server may not reach/,
      ],
      ['https://10.0.0.5', /10\.0\.0\.5 is a private address/],
      ['ftp://gitlab.example.com', /must be an https \(or http\) address, not ftp/],
      [`${instance.origin}/gitlab`, /without a path/],
      ['https://user:pw@gitlab.example.com', /must not carry a user name or password/],
      ['https://gitlab.nowhere.invalid', /the host &quot;gitlab\.nowhere\.invalid&quot; does not resolve/],
    ] as const) {
      const r = await web.post(`/connect/${id}`, { _csrf: csrf, instanceUrl: url, token: PAT, method: 'token' });
      assert.equal(r.status, 400, url);
      assert.match(r.body, says, url);
      assert.match(r.body, /aria-invalid="true"/);
      assert.ok(!r.body.includes(PAT), 'the token is not sent back');
    }
    const empty = await web.post(`/connect/${id}`, {
      _csrf: csrf,
      instanceUrl: instance.origin,
      token: '',
      method: 'token',
    });
    assert.equal(empty.status, 400);
    assert.match(empty.body, /Personal access token is required/);
    assert.equal((await gw.gateway.connections.pending.get(id))?.status, 'pending', 'the link is still unused');
  });

  it('the agent’s connect checks the instance it names, and the link’s page shows it as a suggestion to check', async () => {
    const client = await gw.mcpClient();
    const call = async (instanceUrl: string) =>
      client.callTool({
        name: 'connect',
        arguments: { integration: 'fixture-instance', reconnect: true, instanceUrl },
      });
    const refused = await call('https://169.254.169.254');
    assert.equal(refused.isError, true);
    const body = JSON.parse((refused.content as Array<{ text: string }>)[0]!.text) as Json;
    assert.equal(body['code'], 'GW_ERR_CONNECTION_INSTANCE_BLOCKED');
    const made = JSON.parse(((await call(instance.origin)).content as Array<{ text: string }>)[0]!.text) as Json;
    assert.equal(made['instanceUrl'], instance.origin);
    const page = await web.get(new URL(made['url']).pathname);
    assert.match(page.body, new RegExp(`id="f-instanceUrl" name="instanceUrl" value="${instance.origin}"`));
    assert.match(
      page.body,
      /The agent that asked for this link named this address: check that it is your organisation's/,
    );
  });

  it('signs in to an instance through its own OAuth endpoints with the client registered there; refreshes and revokes there', async () => {
    const { id, page } = await newLink('fixture-instance');
    const csrf = csrfOf(page.body);
    // an instance on which the operator registered no client: what to do instead
    const none = await web.post(`/connect/${id}`, { _csrf: csrf, instanceUrl: instance.origin, method: 'oauth' });
    assert.equal(none.status, 400);
    assert.match(
      none.body,
      new RegExp(
        `This server has no OAuth application registered on ${instance.origin} \\(the operator lists it in FIXTURE_INSTANCE_INSTANCE_CLIENTS\\): use a personal access token instead`,
      ),
    );
    const go = await web.post(`/connect/${id}`, { _csrf: csrf, instanceUrl: mock.origin, method: 'oauth' });
    assert.equal(go.status, 200, go.body.slice(0, 300));
    const refresh = /<meta http-equiv="refresh" content="0; url=([^"]+)">/.exec(go.body)?.[1] ?? '';
    const auth = new URL(refresh.replace(/&amp;/g, '&'));
    assert.equal(auth.origin + auth.pathname, `${mock.origin}/oauth/authorize`);
    assert.equal(auth.searchParams.get('client_id'), mock.clientId);
    const consent = await fetch(`${mock.origin}/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({
        decision: 'allow',
        redirect_uri: auth.searchParams.get('redirect_uri') ?? '',
        state: auth.searchParams.get('state') ?? '',
        code_challenge: auth.searchParams.get('code_challenge') ?? '',
      }),
    });
    const back = new URL(consent.headers.get('location') ?? '');
    const cb = await web.get(`/oauth/callback${back.search}`);
    assert.equal(cb.status, 303);
    assert.match((await web.get(`/connect/${id}`)).body, /is connected/);
    assert.equal(mock.counters.codeExchanges, 1, "the code went to the instance's token endpoint");

    const manifest = gw.gateway.registry.plugin('fixture-instance')!.manifest;
    const connections = gw.gateway.connections;
    const cred = await connections.credential(gw.user.id, manifest);
    assert.equal(cred?.instance, mock.origin);
    assert.ok(mock.activeAccessTokens.has(cred?.values['token'] ?? ''));
    assert.equal((await stored('fixture-instance'))?.instance_url, mock.origin);

    await gw.db.run('UPDATE connections SET expires_at = ? WHERE user_id = ? AND integration = ?', [
      Date.now() - 1000,
      gw.user.id,
      'fixture-instance',
    ]);
    const fresh = await connections.credential(gw.user.id, manifest);
    assert.equal(mock.counters.refreshes, 1, "refreshed at the instance's token endpoint");
    assert.notEqual(fresh?.values['token'], cred?.values['token']);
    assert.equal(fresh?.instance, mock.origin);

    const list = await web.get('/integrations');
    const gone = await web.post('/integrations/fixture-instance/disconnect', { _csrf: csrfOf(list.body) });
    assert.equal(gone.status, 303);
    assert.ok(mock.counters.revocations >= 1, 'revoked at the instance');
  });

  it('an API-key connection with an instance: the form asks for it, and a re-import keeps it until told otherwise', async () => {
    const { id, page } = await newLink('fixture-instance-key');
    assert.match(page.body, /<label for="f-instanceUrl">Server URL/);
    const csrf = csrfOf(page.body);
    const bad = await web.post(`/connect/${id}/form`, {
      _csrf: csrf,
      instanceUrl: 'https://10.1.1.1',
      apiKey: 'key-one',
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /Server URL: 10\.1\.1\.1 is a private address/);
    assert.ok(!bad.body.includes('key-one'));
    const ok = await web.post(`/connect/${id}/form`, {
      _csrf: csrf,
      instanceUrl: instance.origin,
      apiKey: 'key-one',
      team: 'blue',
    });
    assert.equal(ok.status, 303, ok.body.slice(0, 300));
    const r = await gw.execute('instance_key_get', {});
    assert.deepEqual(r.result?.config, { team: 'blue', instanceUrl: instance.origin });
    assert.equal(instance.last().headers['authorization'], 'Bearer key-one');
    // a reconnect starts from where the connection is
    const again = await newLink('fixture-instance-key');
    assert.match(again.page.body, new RegExp(`name="instanceUrl" value="${instance.origin}"`));
    assert.doesNotMatch(again.page.body, /The agent that asked/);

    await gw.connect('fixture-instance-key', { values: { apiKey: 'key-two' } });
    assert.equal((await stored('fixture-instance-key'))?.instance_url, instance.origin, 'kept by a re-import');
    await gw.connect('fixture-instance-key', {
      values: { apiKey: 'key-three' },
      instanceUrl: 'https://api.fixture.test',
    });
    assert.equal((await stored('fixture-instance-key'))?.instance_url, null, "the default's URL is the default");
    const home = await gw.execute('instance_key_get', {});
    assert.deepEqual(home.result?.config, { team: 'blue' });
    assert.equal(cloud.last().headers['authorization'], 'Bearer key-three');
  });

  it('does not use a credential whose row was pointed at another instance outside the gateway', async () => {
    await gw.connect('fixture-instance', { token: PAT, instanceUrl: instance.origin });
    await gw.db.run('UPDATE connections SET instance_url = ? WHERE user_id = ? AND integration = ?', [
      cloud.origin,
      gw.user.id,
      'fixture-instance',
    ]);
    const before = cloud.requests.length;
    const r = await gw.execute('instance_get', { url: '/api/v4/user' });
    assert.equal(r.code, 'GW_ERR_ENGINE_CREDENTIAL_FAILED', JSON.stringify(r));
    assert.match(String(r.error), /names another instance than its credential was given for/);
    assert.equal(cloud.requests.length, before, 'nothing reached the host the row names now');
  });
});
