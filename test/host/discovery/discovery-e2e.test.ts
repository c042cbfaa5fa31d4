/**
 * @module test/host/discovery/discovery-e2e.test
 * Discovery through a started gateway: a real MCP client over Streamable HTTP, the real GitHub
 * and Slack manifests, a tenant policy, and connections stored in SQLite. Search and schema obey
 * the same policy that gates execution, and `connected` follows the caller's connections.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { BUILTIN_PLUGINS_DIR } from '../../../host/paths.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

// Assertions read arbitrary JSON.
type Json = any;

let gw: TestGateway;
let client: Client;
let restricted: Client;

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<{ json: Json; isError: boolean }> {
  const res = await c.callTool({ name, arguments: args });
  const content = res.content as { type: string; text: string }[];
  return { json: JSON.parse(content[0]?.text ?? 'null'), isError: res.isError === true };
}

before(async () => {
  gw = await startGateway({
    plugins: ['github', 'slack'],
    policy: { tenants: { contractors: { denyTools: ['github_merge_pull_request'], denyPlugins: ['slack'] } } },
  });
  await gw.connect('github', { token: 'gho_test' });
  client = await gw.mcpClient();
  const contractor = await gw.createUser('contractor@example.com', 'contractors');
  restricted = await gw.mcpClient(contractor.apiKey);
});
after(async () => gw?.close());

describe('discovery through the gateway', () => {
  it('tools/list starts with search_tools and get_tool_schema', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.slice(0, 2).map((t) => t.name),
      ['search_tools', 'get_tool_schema'],
    );
  });

  it('finds "create pull request", reporting the connection state per integration', async () => {
    const { json } = await call(client, 'search_tools', { query: 'create pull request' });
    assert.equal(json.tools[0].name, 'github_create_pull_request');
    assert.equal(json.tools[0].connected, true);
    const slack = await call(client, 'search_tools', { query: 'send a message to a channel' });
    assert.equal(slack.json.tools[0].integration, 'slack');
    assert.equal(slack.json.tools[0].connected, false);
  });

  it('marks an integration nobody can connect (no OAuth client configured), and execute_tools sends no one to connect', async () => {
    // this gateway has no SLACK_CLIENT_ID; GitHub is connected by an imported token
    const { json } = await call(client, 'search_tools', { query: 'send a message to a channel' });
    const slack = json.tools[0];
    assert.equal(slack.integration, 'slack');
    assert.deepEqual([slack.connected, slack.connectable], [false, false]);
    assert.match(slack.why, /SLACK_CLIENT_ID/);
    const github = (await call(client, 'search_tools', { query: 'create pull request' })).json.tools[0];
    assert.deepEqual([github.connected, github.connectable, github.why], [true, undefined, undefined]);
    const schema = await call(client, 'get_tool_schema', { tool: 'slack_post_message' });
    assert.deepEqual([schema.json.connected, schema.json.connectable], [false, false]);
    assert.match(schema.json.why, /SLACK_CLIENT_ID/);
    assert.equal((await call(client, 'get_tool_schema', { tool: 'github_get_me' })).json.connected, true);
    const run = await call(client, 'execute_tools', {
      executions: [{ tool: 'slack_post_message', args: { channel: 'C1', text: 'hi' } }],
    });
    const item = run.json.results[0];
    assert.deepEqual(Object.keys(item).sort(), ['code', 'error', 'integration', 'message']);
    assert.deepEqual(
      [item.error, item.code, item.integration],
      ['NOT_CONNECTED', 'GW_ERR_ENGINE_NOT_CONNECTED', 'slack'],
    );
    assert.match(
      item.message,
      /cannot be connected on this server yet \(the server has no SLACK_CLIENT_ID configured\)/,
    );
    assert.doesNotMatch(item.message, /Use connect/);
    const { tools } = await client.listTools();
    assert.doesNotMatch(tools.find((t) => t.name === 'search_tools')?.description ?? '', /every connected integration/);
  });

  it('hides what the tenant policy denies, in search and in schemas', async () => {
    const open = await call(client, 'search_tools', { query: 'merge pull request' });
    assert.equal(open.json.tools[0].name, 'github_merge_pull_request');
    const denied = await call(restricted, 'search_tools', { query: 'merge pull request', limit: 50 });
    assert.ok(denied.json.tools.length > 0);
    assert.ok(
      denied.json.tools.every((t: Json) => t.name !== 'github_merge_pull_request' && t.integration !== 'slack'),
    );
    const schema = await call(restricted, 'get_tool_schema', { tool: 'github_merge_pull_request' });
    assert.equal(schema.isError, true);
    assert.equal(schema.json.code, 'GW_ERR_DISCOVERY_TOOL_NOT_FOUND');
    const slack = await call(restricted, 'search_tools', { query: 'slack', integration: 'slack' });
    assert.deepEqual(slack.json.tools, []);
    assert.deepEqual(
      slack.json.integrations.map((i: Json) => i.name),
      ['github'],
    );
  });

  it('list_integrations counts the tools the tenant may use, as search_tools does', async () => {
    const all = (await call(client, 'list_integrations', {})).json.integrations.find((i: Json) => i.name === 'github');
    const mine = (await call(restricted, 'list_integrations', {})).json.integrations.find(
      (i: Json) => i.name === 'github',
    );
    assert.equal(mine.tools, all.tools - 1, 'github_merge_pull_request is denied to contractors');
  });

  it('execute_tools reads a tool name as get_tool_schema does (surrounding spaces, upper case)', async () => {
    const schema = await call(client, 'get_tool_schema', { tool: ' GitHub_Get_Me ' });
    assert.equal(schema.json.name, 'github_get_me');
    const run = await call(client, 'execute_tools', { executions: [{ tool: ' GitHub_Get_Me ', args: {} }] });
    assert.notEqual(run.json.results[0].code, 'GW_ERR_ENGINE_TOOL_NOT_FOUND', JSON.stringify(run.json.results[0]));
  });

  it('says which words match no tool, counts them against the score and lists the integrations', async () => {
    const plain = await call(client, 'search_tools', { query: 'create merge request' });
    const { json } = await call(client, 'search_tools', { query: 'create gitlab merge request' });
    assert.deepEqual(json.unmatched, ['gitlab']);
    assert.equal(json.tools[0].name, 'github_create_pull_request');
    assert.ok(
      json.tools[0].score < plain.json.tools[0].score * 0.75,
      `${json.tools[0].score} vs ${plain.json.tools[0].score}`,
    );
    assert.match(json.hint, /"gitlab" matched no tool/);
    assert.match(json.hint, /github \(GitHub, \d+ tools\), slack \(Slack, \d+ tools\)/);
    assert.equal(plain.json.unmatched, undefined);
    assert.equal(plain.json.hint, undefined);
    const confluence = await call(client, 'search_tools', { query: 'create confluence page' });
    assert.deepEqual(confluence.json.unmatched, ['confluence']);
    // "pagerduty" matches nothing, and the best match covers too little of the rest: both are said
    const incident = await call(client, 'search_tools', { query: 'create a pagerduty incident' });
    assert.deepEqual(incident.json.unmatched, ['pagerduty']);
    assert.match(
      incident.json.hint,
      /^The word "pagerduty" matched no tool: .* No tool may fit: the first result, github_create_issue, leaves out the word "pagerduty" of your request\. .* Integrations you can use: github/,
    );
    // the rest is well matched: only the word is reported
    const message = await call(client, 'search_tools', { query: 'send a message in PagerDuty' });
    assert.deepEqual(message.json.unmatched, ['pagerduty']);
    assert.equal(message.json.tools[0].name, 'slack_post_message');
    assert.doesNotMatch(message.json.hint, /No tool may fit/);
    // an issue number is a value, not a word asked for
    const numbered = await call(client, 'search_tools', { query: 'comment on issue 12' });
    assert.equal(numbered.json.unmatched, undefined);
  });

  it('warns when no tool fits, naming what the best match leaves out, and not for a long request it answers', async () => {
    // every word is a catalog word, but the best match covers too little of the request
    const lights = await call(client, 'search_tools', { query: 'turn off the living room lights' });
    assert.ok(lights.json.tools.length > 0);
    assert.equal(lights.json.unmatched, undefined);
    assert.match(
      lights.json.hint,
      new RegExp(
        `^No tool may fit: the first result, ${lights.json.tools[0].name}, leaves out the words "turn", "off"`,
      ),
    );
    assert.match(
      lights.json.hint,
      /the tool you want may not exist here: try other words once, then tell the user .* Integrations you can use: github \(GitHub, \d+ tools\)/,
    );
    // its score is no figure an agent can use, and the hint does not show it
    assert.doesNotMatch(lights.json.hint, /score/);
    // long and low-scoring, but answered by its first result: no warning
    for (const [query, tool] of [
      ['leave a comment on the GitHub issue saying I am working on it', 'github_add_issue_comment'],
      ['which Slack account and workspace am I connected as', 'slack_whoami'],
    ]) {
      const { json } = await call(client, 'search_tools', { query });
      assert.equal(json.tools[0].name, tool, query);
      assert.ok(json.tools[0].score < 0.25, `${query}: ${json.tools[0].score}`);
      assert.equal(json.hint, undefined, `${query}: ${json.hint}`);
    }
  });

  it('reads a camelCase run of known words as those words, but keeps a brand whole', async () => {
    for (const [query, tool] of [
      ['listPullRequests', 'github_list_pull_requests'],
      ['addIssueComment', 'github_add_issue_comment'],
      ['createPullRequest', 'github_create_pull_request'],
      ['lookupUserByEmail', 'slack_lookup_user_by_email'],
    ]) {
      const { json } = await call(client, 'search_tools', { query });
      assert.equal(json.tools[0]?.name, tool, query);
      assert.equal(json.unmatched, undefined, query);
    }
    // "lab" alone is a prefix of "label": GitLab must stay one word, and one that matches nothing
    const gitlab = await call(client, 'search_tools', { query: 'create GitLab merge request' });
    assert.deepEqual(gitlab.json.unmatched, ['gitlab']);
  });

  it('answers get_tool_schema for a meta-tool: its schema, and that it is called directly', async () => {
    const { tools } = await client.listTools();
    for (const name of ['search_tools', 'list_integrations', 'Execute_Tools ']) {
      const { json, isError } = await call(client, 'get_tool_schema', { tool: name });
      const listed = tools.find((t) => t.name === name.trim().toLowerCase());
      assert.equal(isError, false, name);
      assert.equal(json.metaTool, true);
      assert.equal(json.name, listed?.name);
      assert.deepEqual(json.inputSchema, listed?.inputSchema);
      assert.match(json.hint, /call it directly/);
    }
  });

  it('says how many tools match and how to see the rest', async () => {
    const { json } = await call(client, 'search_tools', { query: 'issue' });
    assert.equal(json.tools.length, 10);
    assert.ok(json.total > 10, String(json.total));
    assert.match(json.more, new RegExp(`^${json.total - 10} more tools match: pass limit: ${json.total} to see all`));
    const all = await call(client, 'search_tools', { query: 'issue', limit: json.total });
    assert.equal(all.json.tools.length, json.total);
    assert.equal(all.json.more, undefined);
  });

  it('reads full-width text as plain letters and refuses a query of spaces as empty', async () => {
    const wide = await call(client, 'search_tools', { query: 'ｃｒｅａｔｅ ｐｕｌｌ ｒｅｑｕｅｓｔ' });
    assert.equal(wide.json.tools[0]?.name, 'github_create_pull_request');
    assert.equal(
      (await call(client, 'get_tool_schema', { tool: 'ｇｉｔｈｕｂ＿ｇｅｔ＿ｍｅ' })).json.name,
      'github_get_me',
    );
    for (const [tool, args, field] of [
      ['search_tools', { query: ' \t\n ' }, 'query'],
      ['search_tools', { query: 'issue', integration: '  ' }, 'integration'],
      ['get_tool_schema', { tool: '   ' }, 'tool'],
    ] as const) {
      const { json, isError } = await call(client, tool, args);
      assert.equal(isError, true, JSON.stringify(args));
      assert.equal(json.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
      assert.ok(json.error.startsWith(`Invalid arguments for ${tool}: ${field}: `), json.error);
    }
  });

  it('suggests no unrelated tool for a name that comes close to nothing', async () => {
    const { json, isError } = await call(client, 'get_tool_schema', { tool: 'google_drive_upload' });
    assert.equal(isError, true);
    assert.deepEqual(json.suggestions, []);
    assert.match(json.hint, /none comes close\. Integrations you can use: github \(GitHub\), slack \(Slack\)/);
  });

  it('serves the manifest schema as validated, with defaults and descriptions', async () => {
    const manifest = JSON.parse(readFileSync(`${BUILTIN_PLUGINS_DIR}/github/manifest.json`, 'utf8'));
    const tool = manifest.tools.find((t: Json) => t.name === 'github_list_pull_requests');
    const { json, isError } = await call(client, 'get_tool_schema', { tool: 'github_list_pull_requests' });
    assert.equal(isError, false);
    assert.equal(json.integration, 'github');
    assert.deepEqual(json.inputSchema, tool.inputSchema);
    assert.equal(json.description, tool.description);
    const typo = await call(client, 'get_tool_schema', { tool: 'github_list_pull_request' });
    assert.equal(typo.json.suggestions[0], 'github_list_pull_requests');
  });
});
