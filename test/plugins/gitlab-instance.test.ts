/**
 * @module test/plugins/gitlab-instance.test
 * GitLab self-managed end to end, through the real gateway, portal and sandbox: a loopback server
 * stands in for the instance (the test policy allows 127.0.0.0/8 and http instances), another for
 * gitlab.com (through upstreams). A personal access token and the instance URL entered on the
 * connect page (no OAuth client configured: the page offers the token only); the tools' requests
 * go to the instance's /api/v4 with `Authorization: Bearer <PAT>` and none to gitlab.com; a project
 * web URL on the instance is taken, one on gitlab.com is refused naming both hosts; the
 * integrations page shows where the connection goes. A connection imported without an instance
 * still reaches gitlab.com, and an instance at the metadata address is refused at import.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { csrfOf, signInWithKey } from '../helpers/web-client.js';

const PAT = 'glpat-selfmanaged-0123456789abcdef';
const project = {
  id: 42,
  name: 'api',
  path_with_namespace: 'acme/api',
  default_branch: 'main',
  visibility: 'private',
  web_url: '',
  http_url_to_repo: '',
};

describe('gitlab on a self-managed instance', () => {
  let gw: TestGateway;
  let instance: Upstream;
  let cloud: Upstream;

  before(async () => {
    const answer = (req: { path: string }) =>
      req.path === '/api/v4/user'
        ? { json: { id: 7, username: 'alice', name: 'Alice', state: 'active', web_url: 'x' } }
        : { json: { ...project, web_url: `${instance.origin}/acme/api` } };
    instance = await startUpstream(answer);
    cloud = await startUpstream(answer);
    gw = await startGateway({
      plugins: ['gitlab'],
      upstreams: { 'https://gitlab.com': cloud.origin },
      policy: { http: { allowPrivateCidrs: ['127.0.0.0/8'], allowHttpInstances: true } },
    });
  });
  after(async () => {
    await gw.close();
    await Promise.all([instance.close(), cloud.close()]);
  });

  it('connects with a personal access token and the instance URL on the connect page; every request goes to the instance with it', async () => {
    const web = await signInWithKey(gw.url, gw.apiKey);
    const list = await web.get('/integrations');
    assert.doesNotMatch(
      list.body,
      /Not available/,
      'a personal token makes GitLab connectable without an OAuth client',
    );
    const made = await web.post('/integrations/gitlab/connect', { _csrf: csrfOf(list.body) });
    assert.equal(made.status, 303);
    const page = await web.get(made.location ?? '');
    assert.match(page.body, /<label for="f-instanceUrl">GitLab instance URL/);
    assert.match(page.body, /placeholder="https:\/\/gitlab\.com"/);
    assert.doesNotMatch(page.body, /value="oauth"/, 'no OAuth client anywhere: the token is the way in');
    assert.match(page.body, /<h2>Use a token<\/h2>/);
    // Enter in the token field submits the form without a method: the token typed is the choice
    const done = await web.post(made.location ?? '', {
      _csrf: csrfOf(page.body),
      instanceUrl: instance.origin,
      token: PAT,
    });
    assert.equal(done.status, 303, done.body.slice(0, 400));
    assert.match((await web.get(made.location ?? '')).body, /GitLab<\/strong>: is connected/);

    const me = await gw.execute('gitlab_get_current_user');
    assert.equal(me.result?.username, 'alice', JSON.stringify(me));
    assert.equal(instance.last().method, 'GET');
    assert.equal(instance.last().path, '/api/v4/user');
    assert.equal(instance.last().headers['authorization'], `Bearer ${PAT}`);

    const byUrl = await gw.execute('gitlab_get_project', { project: `${instance.origin}/acme/api/-/tree/main` });
    assert.equal(byUrl.result?.id, 42, JSON.stringify(byUrl));
    assert.equal(instance.last().path, '/api/v4/projects/acme%2Fapi');
    const host = new URL(instance.origin).host;
    const foreign = await gw.execute('gitlab_get_project', { project: 'https://gitlab.com/acme/api' });
    assert.match(
      String(foreign.error),
      new RegExp(`that URL is on gitlab\\.com, not ${host.replace(/\./g, '\\.')}, the GitLab this connection reaches`),
    );
    assert.equal(cloud.requests.length, 0, 'nothing went to gitlab.com');

    const after = await web.get('/integrations');
    assert.ok(
      after.body.includes(`at <span class="instance">${host}</span>`),
      'the integrations page shows the instance',
    );
  });

  it('reaches gitlab.com when the connection names no instance, and refuses an instance at the metadata address', async () => {
    const { user, apiKey } = await gw.createUser('cloud-user@example.com');
    await gw.connect('gitlab', { token: 'glpat-cloud-0001' }, user);
    const me = await gw.execute('gitlab_get_current_user', {}, apiKey);
    assert.equal(me.result?.username, 'alice', JSON.stringify(me));
    assert.equal(cloud.last().path, '/api/v4/user');
    assert.equal(cloud.last().headers['authorization'], 'Bearer glpat-cloud-0001');
    await assert.rejects(
      gw.connect('gitlab', { token: 'glpat-cloud-0002', instanceUrl: 'https://169.254.169.254' }, user),
      (err: Error & { code?: string }) =>
        err.code === 'GW_ERR_CONNECTION_INSTANCE_BLOCKED' &&
        /GitLab instance URL: 169\.254\.169\.254 is a linkLocal address/.test(err.message),
    );
    const row = await gw.db.get<{ instance_url: string | null }>(
      "SELECT instance_url FROM connections WHERE user_id = ? AND integration = 'gitlab'",
      [user.id],
    );
    assert.equal(row?.instance_url, null, 'the refused import changed nothing');
  });
});
