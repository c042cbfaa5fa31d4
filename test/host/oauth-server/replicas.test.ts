/**
 * @module test/host/oauth-server/replicas.test
 * The OAuth server on PostgreSQL, as replicas behind one public name run it: a client registered
 * and authorized on one replica uses its tokens on the other; a refresh on one and the reuse of the
 * spent token on the other revokes the chain on both; a grant revoked on one replica's keys page is
 * refused by the other at its next request; two replicas refreshing with the same token at once
 * leave exactly one winner and revoke the grant (two holders). A gateway on the same database under
 * another public name refuses the tokens (another audience).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKey } from '../../../host/connections/vault.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import {
  authorizationParams,
  codeThroughConsent,
  mcpWith,
  pkcePair,
  postForm,
  registeredClient,
} from '../../helpers/oauth-requests.js';
import { csrfOf, signInWithKey, type WebClient } from '../../helpers/web-client.js';

const REDIRECT = 'http://127.0.0.1:40333/cb';
const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

describe('the OAuth server on PostgreSQL, across replicas', { skip: postgresSkipReason() ?? false }, () => {
  let pg: TestPostgres;
  let a: TestGateway;
  let b: TestGateway;
  let webA: WebClient;
  let webB: WebClient;
  let clientId: string;
  const pk = pkcePair();

  /** tokens for a new grant made on replica A */
  async function grantOnA(): Promise<{ access_token: string; refresh_token: string }> {
    const code = await codeThroughConsent(webA, authorizationParams(a.url, clientId, REDIRECT, pk.challenge));
    // exchanged on B: replicas share codes too
    const r = await postForm(b.url, '/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: pk.verifier,
      client_id: clientId,
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json;
  }
  const refreshAt = (gw: TestGateway, token: string) =>
    postForm(gw.url, '/token', { grant_type: 'refresh_token', refresh_token: token, client_id: clientId });

  before(async () => {
    pg = await startPostgres();
    const env = { WORKBENCH_ENCRYPTION_KEY: generateKey().toString('hex') };
    a = await startGateway({ databaseUrl: pg.url, env, plugins: [], pluginDirs: [FIXTURES], workers: 1 });
    // the second replica is reached by the same public URL (a load balancer's name)
    b = await startGateway({
      databaseUrl: pg.url,
      env,
      plugins: [],
      pluginDirs: [FIXTURES],
      workers: 1,
      publicUrl: a.url,
    });
    webA = await signInWithKey(a.url, a.apiKey);
    webB = await signInWithKey(b.url, b.apiKey, '/integrations', a.url);
    clientId = await registeredClient(b.url, REDIRECT);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await pg?.stop();
  });

  it('a token issued through one replica works on the other; a spent refresh token reused anywhere revokes the chain', async () => {
    const first = await grantOnA();
    assert.equal(await mcpWith(a.url, first.access_token), 200);
    assert.equal(await mcpWith(b.url, first.access_token), 200);
    const second = await refreshAt(b, first.refresh_token);
    assert.equal(second.status, 200);
    assert.equal(await mcpWith(a.url, second.json.access_token), 200);
    const reuse = await refreshAt(a, first.refresh_token);
    assert.equal(reuse.json.error, 'invalid_grant');
    assert.equal(await mcpWith(b.url, second.json.access_token), 401);
    assert.equal((await refreshAt(b, second.json.refresh_token)).json.error, 'invalid_grant');
  });

  it('revoking on one replica’s keys page refuses the next request on the other', async () => {
    const t = await grantOnA();
    assert.equal(await mcpWith(a.url, t.access_token), 200);
    const keys = await webB.get('/keys');
    const ids = [...keys.body.matchAll(/action="\/keys\/apps\/([^/]+)\/revoke"/g)].map((m) => m[1] as string);
    const grant = await b.db.get<{ id: string }>(
      "SELECT g.id FROM oauth_grants g JOIN oauth_tokens t ON t.grant_id = g.id WHERE t.kind = 'access' ORDER BY t.created_at DESC LIMIT 1",
    );
    assert.ok(grant && ids.includes(grant.id), 'the grant is listed on the other replica');
    const res = await webB.post(`/keys/apps/${grant.id}/revoke`, { _csrf: csrfOf(keys.body) });
    assert.equal(res.status, 303);
    assert.equal(await mcpWith(a.url, t.access_token), 401);
  });

  it('two replicas refreshing with one token at once: one wins, and the grant is revoked', async () => {
    const t = await grantOnA();
    const answers = await Promise.all([refreshAt(a, t.refresh_token), refreshAt(b, t.refresh_token)]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400]);
    const winner = answers.find((r) => r.status === 200);
    assert.equal(answers.find((r) => r.status === 400)?.json.error, 'invalid_grant');
    assert.equal(await mcpWith(a.url, winner?.json.access_token), 401, 'two holders: the grant is revoked');
  });

  it('a gateway on the same database under another public name refuses the tokens: another audience', async () => {
    const t = await grantOnA();
    const other = await startGateway({
      databaseUrl: pg.url,
      env: { WORKBENCH_ENCRYPTION_KEY: generateKey().toString('hex') },
      plugins: [],
      workers: 1,
    });
    try {
      assert.notEqual(other.url, a.url);
      const res = await fetch(`${other.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.access_token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.equal(await mcpWith(a.url, t.access_token), 200, 'still good for its own audience');
      const refresh = await refreshAt(other, t.refresh_token);
      assert.equal(refresh.json.error, 'invalid_grant', 'nor refreshed by a server of another audience');
    } finally {
      await other.close();
    }
  });
});
