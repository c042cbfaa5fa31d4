/**
 * @module test/host/discovery/integration-names-e2e.test
 * Integration names as agents write them ("jira", "Atlassian Jira", "new relic"), through a
 * started gateway with the real Jira and New Relic manifests: search_tools accepts them as a
 * filter, while connect, disconnect and /rest/:integration refuse them as before but name the
 * integration meant and the ones that exist. And queries about them rank as an agent expects:
 * a topic without a verb ("new relic issues") reads.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { callJson } from '../../helpers/mcp-call.js';

// Assertions read arbitrary JSON.
type Json = any;

let gw: TestGateway;
let client: Client;

const call = (name: string, args: Record<string, unknown>): Promise<{ json: Json; isError: boolean }> =>
  callJson(client, name, args);

before(async () => {
  gw = await startGateway({ plugins: ['atlassian-jira', 'newrelic'] });
  client = await gw.mcpClient();
});
after(async () => gw?.close());

describe('integration names as agents write them', () => {
  it('connect and disconnect refuse "jira" with the same code, naming atlassian-jira and the integrations there are', async () => {
    assert.equal(
      (await call('search_tools', { query: 'create issue', integration: 'jira' })).json.tools[0].integration,
      'atlassian-jira',
    );
    for (const [tool, wanted, meant] of [
      ['connect', 'jira', 'atlassian-jira'],
      ['connect', 'Atlassian Jira', 'atlassian-jira'],
      ['connect', 'new relic', 'newrelic'],
      ['disconnect', 'jira', 'atlassian-jira'],
      ['connect', 'newrelc', 'newrelic'],
    ] as const) {
      const { json, isError } = await call(tool, { integration: wanted });
      assert.equal(isError, true, `${tool} ${wanted}`);
      assert.equal(json.code, 'GW_ERR_CONNECTION_UNKNOWN_INTEGRATION');
      assert.equal(json.didYouMean, meant, `${tool} ${wanted}`);
      assert.deepEqual(json.integrations, ['atlassian-jira', 'newrelic']);
      assert.match(json.error, new RegExp(`Did you mean "${meant}"\\?`));
    }
    const gitlab = await call('connect', { integration: 'gitlab' });
    assert.equal(gitlab.json.didYouMean, undefined);
    assert.deepEqual(gitlab.json.integrations, ['atlassian-jira', 'newrelic']);
  });

  it('GET and POST /rest/:integration stay authoritative (404) but say which name was meant', async () => {
    const res = await fetch(`${gw.url}/rest/jira`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    const json = (await res.json()) as Json;
    assert.equal(res.status, 404);
    assert.equal(json.code, 'GW_ERR_TRANSPORT_INTEGRATION_NOT_FOUND');
    assert.equal(json.didYouMean, 'atlassian-jira');
    assert.deepEqual(json.integrations, ['atlassian-jira', 'newrelic']);
    const post = await gw.rest('New-Relic', { tool: 'newrelic_list_accounts', args: {} });
    assert.equal(post.status, 404);
    assert.equal(post.json.code, 'GW_ERR_TRANSPORT_INTEGRATION_NOT_FOUND');
    assert.equal(post.json.didYouMean, 'newrelic');
    const exact = await fetch(`${gw.url}/rest/atlassian-jira`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    assert.equal(exact.status, 200);
  });
});

describe('ranking over the real Jira and New Relic manifests', () => {
  const top = async (query: string): Promise<string[]> =>
    (await call('search_tools', { query })).json.tools.map((t: Json) => t.name);
  it('a query without a verb prefers tools that read', async () => {
    assert.equal((await top('new relic issues'))[0], 'newrelic_list_issues');
    assert.match((await top('alert violations'))[0] ?? '', /^newrelic_(list|get|search)_/);
  });
  it('a plural asks for a list or a search, not for the tool that gets one by its key', async () => {
    assert.equal((await top('get my jira issues assigned to me'))[0], 'jira_search_issues');
  });
  it('"new" in "new relic" asks for nothing new', async () => {
    assert.equal((await top('new relic open incidents'))[0], 'newrelic_list_issues');
    assert.ok(!(await top('new relic: which alerts are open')).slice(0, 3).includes('newrelic_create_alert_policy'));
  });
});

describe('a name several integrations share ("google", "atlassian")', () => {
  let many: TestGateway;
  let agent: Client;
  let noDrive: Client;
  let noDriveKey: string;
  before(async () => {
    many = await startGateway({
      plugins: ['google-gmail', 'google-drive', 'atlassian-jira', 'atlassian-confluence'],
      policy: { tenants: { 'no-drive': { denyPlugins: ['google-drive'] } } },
    });
    agent = await many.mcpClient();
    noDriveKey = (await many.createUser('no-drive@example.com', 'no-drive')).apiKey;
    noDrive = await many.mcpClient(noDriveKey);
  });
  after(async () => many?.close());

  it('connect names every one of them and guesses none; a name only one has is still meant', async () => {
    for (const [wanted, candidates] of [
      ['google', ['google-drive', 'google-gmail']],
      ['Atlassian', ['atlassian-confluence', 'atlassian-jira']],
    ] as const) {
      const { json, isError } = await callJson(agent, 'connect', { integration: wanted });
      assert.equal(isError, true);
      assert.equal(json.code, 'GW_ERR_CONNECTION_UNKNOWN_INTEGRATION');
      assert.equal(json.didYouMean, undefined, wanted);
      assert.deepEqual(json.candidates, candidates, wanted);
      assert.match(
        json.error,
        new RegExp(
          `"${wanted}" may mean several integrations, each connected on its own: ${candidates.map((c) => `"${c}"`).join(', ')}\\.`,
        ),
      );
    }
    for (const [wanted, meant] of [
      ['gmail', 'google-gmail'],
      ['confluence', 'atlassian-confluence'],
      ['Google Drive', 'google-drive'],
    ] as const) {
      const { json } = await callJson(agent, 'connect', { integration: wanted });
      assert.equal(json.didYouMean, meant, wanted);
      assert.equal(json.candidates, undefined, wanted);
    }
  });

  it('a typo as close to several ("gogle", "atlasian") lists them too; disconnect answers alike', async () => {
    for (const [tool, wanted, candidates] of [
      ['connect', 'gogle', ['google-drive', 'google-gmail']],
      ['connect', 'atlasian', ['atlassian-confluence', 'atlassian-jira']],
      ['disconnect', 'google', ['google-drive', 'google-gmail']],
    ] as const) {
      const { json } = await callJson(agent, tool, { integration: wanted });
      assert.equal(json.code, 'GW_ERR_CONNECTION_UNKNOWN_INTEGRATION', `${tool} ${wanted}`);
      assert.equal(json.didYouMean, undefined, `${tool} ${wanted}`);
      assert.deepEqual(json.candidates, candidates, `${tool} ${wanted}`);
    }
  });

  it('an integration the caller may not use is never a candidate: "google" then means the one left', async () => {
    const { json } = await callJson(noDrive, 'connect', { integration: 'google' });
    assert.equal(json.didYouMean, 'google-gmail');
    assert.equal(json.candidates, undefined);
    assert.ok(!JSON.stringify(json).includes('google-drive'), JSON.stringify(json));
    const res = await fetch(`${many.url}/rest/google`, { headers: { authorization: `Bearer ${noDriveKey}` } });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 404);
    assert.equal(body.didYouMean, 'google-gmail');
    assert.ok(!JSON.stringify(body).includes('google-drive'), JSON.stringify(body));
  });

  it('/rest/google is a 404 naming the candidates', async () => {
    const res = await fetch(`${many.url}/rest/google`, { headers: { authorization: `Bearer ${many.apiKey}` } });
    const json = (await res.json()) as Json;
    assert.equal(res.status, 404);
    assert.equal(json.didYouMean, undefined);
    assert.deepEqual(json.candidates, ['google-drive', 'google-gmail']);
    assert.match(json.error, /it may mean several: google-drive, google-gmail; use the exact name/);
    const post = await many.rest('google', { tool: 'gmail_list_labels', args: {} });
    assert.equal(post.status, 404);
    assert.deepEqual(post.json.candidates, ['google-drive', 'google-gmail']);
  });
});
