/**
 * @module test/host/discovery/meta-tools.unit.test
 * search_tools and get_tool_schema over a synthetic catalog, driven through the real MCP protocol
 * core (SDK client ⇄ in-memory transport ⇄ the gateway's server): policy filtering, connection
 * state, hints, suggestions, argument bounds and the lazy index rebuild.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CatalogTool } from '../../../host/discovery/catalog-tool.js';
import {
  createDiscoveryMetaTools,
  DISCOVERY_TOOL_NOT_FOUND,
  trimDescription,
} from '../../../host/discovery/meta-tools.js';
import type { User } from '../../../host/storage/users.js';
import { createLogger } from '../../../host/telemetry/logger.js';
import { buildMcpServer } from '../../../host/transport/mcp-server.js';
import { SYNTHETIC_CATALOG } from '../../helpers/synthetic-catalog.js';
import { callJson } from '../../helpers/mcp-call.js';

const alice: User = { id: 'u-alice', email: 'alice@example.com', tenant: 'acme', createdAt: 0 };
// Assertions read arbitrary JSON.
type Json = any;

let catalog: readonly CatalogTool[] = SYNTHETIC_CATALOG;
const catalogCalls = { n: 0 };
const denied = new Set(['github_merge_pull_request', 'jira_add_comment']);
const connected = new Set(['github']);
const connectionChecks: string[] = [];

const metaTools = createDiscoveryMetaTools({
  catalog: () => {
    catalogCalls.n++;
    return catalog;
  },
  isAllowed: (user, tool) => user.id === alice.id && !denied.has(tool.name),
  isConnected: async (_user, integration) => {
    connectionChecks.push(integration);
    if (integration === 'atlassian-jira') throw new Error('connection store down');
    return connected.has(integration);
  },
});

let client: Client;

const call = (name: string, args: Record<string, unknown>): Promise<{ json: Json; isError: boolean }> =>
  callJson(client, name, args);

before(async () => {
  const server = buildMcpServer(
    { metaTools: () => metaTools, version: 'test', logger: createLogger({ destination: 'silent' }) },
    alice,
    'mcp',
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
});
after(async () => client.close());

describe('tools/list', () => {
  it('lists search_tools then get_tool_schema, read-only, described for an agent', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['search_tools', 'get_tool_schema'],
    );
    for (const t of tools) {
      assert.equal(t.annotations?.readOnlyHint, true);
      for (const step of ['search_tools', 'get_tool_schema', 'execute_tools', 'NOT_CONNECTED', 'connect']) {
        assert.ok(t.description?.includes(step), `${t.name} description mentions ${step}`);
      }
    }
    const search = tools[0]?.inputSchema as Json;
    assert.deepEqual(search.required, ['query']);
    assert.equal(search.properties.limit.maximum, 50);
    assert.equal(search.properties.limit.default, 10);
    assert.equal(search.properties.query.maxLength, 500);
  });
});

describe('search_tools', () => {
  it('ranks, scores and reports the connection state of each integration once', async () => {
    connectionChecks.length = 0;
    const { json, isError } = await call('search_tools', { query: 'create a pull request' });
    assert.equal(isError, false);
    assert.equal(json.tools[0].name, 'github_create_pull_request');
    assert.equal(json.tools[0].integration, 'github');
    assert.equal(json.tools[0].connected, true);
    assert.ok(json.tools[0].score > 0 && json.tools[0].score <= 1);
    assert.ok(json.tools.length <= 10);
    assert.equal(connectionChecks.filter((i) => i === 'github').length, 1);
  });
  it('never shows a tool the caller may not run', async () => {
    const { json } = await call('search_tools', { query: 'merge pull request', limit: 50 });
    assert.ok(!json.tools.some((t: Json) => denied.has(t.name)));
    const jira = await call('search_tools', { query: 'comment', integration: 'jira' });
    assert.ok(!jira.json.tools.some((t: Json) => t.name === 'jira_add_comment'));
  });
  it('treats a failing connection check as not connected', async () => {
    const { json } = await call('search_tools', { query: 'create jira issue' });
    assert.equal(json.tools[0].name, 'jira_create_issue');
    assert.equal(json.tools[0].connected, false);
  });
  it('honours integration and limit', async () => {
    const { json } = await call('search_tools', { query: 'list', integration: 'slack', limit: 2 });
    assert.equal(json.tools.length, 2);
    assert.ok(json.tools.every((t: Json) => t.integration === 'slack'));
  });
  it('explains an empty result and lists the integrations the caller can use', async () => {
    const { json, isError } = await call('search_tools', { query: 'zzqx frobnicate' });
    assert.equal(isError, false);
    assert.deepEqual(json.tools, []);
    assert.match(json.hint, /No tool matched/);
    assert.deepEqual(
      json.integrations.map((i: Json) => i.name),
      ['atlassian-jira', 'github', 'slack'],
    );
    const unknown = await call('search_tools', { query: 'issue', integration: 'gitlab' });
    assert.match(unknown.json.hint, /No integration "gitlab"/);
  });
  it('refuses out-of-bounds arguments with an isError result naming the argument', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query: '' }, 'query'],
      [{ query: 'x'.repeat(501) }, 'query'],
      [{ query: 'issue', limit: 51 }, 'limit'],
      [{ query: 'issue', limit: 0 }, 'limit'],
      [{}, 'query'],
    ];
    for (const [args, field] of cases) {
      const { json, isError } = await call('search_tools', args);
      assert.equal(isError, true, JSON.stringify(args));
      assert.equal(json.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
      assert.ok(json.error.startsWith(`Invalid arguments for search_tools: ${field}: `), json.error);
    }
  });
  it('trims long descriptions to about 300 characters', async () => {
    const long = `${'Lists things in a very long way. '.repeat(20)}End.`;
    assert.ok(trimDescription(long).length <= 300);
    assert.ok(trimDescription(long).endsWith('.'));
    assert.equal(trimDescription('short'), 'short');
    assert.ok(trimDescription('word '.repeat(100)).endsWith('…'));
  });
});

describe('get_tool_schema', () => {
  it('returns the manifest schema and annotations of an allowed tool', async () => {
    const { json, isError } = await call('get_tool_schema', { tool: 'github_list_pull_requests' });
    assert.equal(isError, false);
    const tool = SYNTHETIC_CATALOG.find((t) => t.name === 'github_list_pull_requests');
    assert.deepEqual(json, {
      name: tool?.name,
      integration: 'github',
      description: tool?.description,
      inputSchema: tool?.inputSchema,
      annotations: { readOnlyHint: true },
      connected: true,
    });
  });
  it('answers "Tool not found" with close names for a typo', async () => {
    const { json, isError } = await call('get_tool_schema', { tool: 'github_create_pull_reqest' });
    assert.equal(isError, true);
    assert.equal(json.error, 'Tool not found');
    assert.equal(json.code, DISCOVERY_TOOL_NOT_FOUND);
    assert.equal(json.suggestions[0], 'github_create_pull_request');
    assert.ok(json.suggestions.length <= 5);
  });
  it('answers a denied tool exactly like a missing one, and never suggests it', async () => {
    const { json, isError } = await call('get_tool_schema', { tool: 'github_merge_pull_request' });
    assert.equal(isError, true);
    assert.equal(json.code, DISCOVERY_TOOL_NOT_FOUND);
    assert.ok(!json.suggestions.includes('github_merge_pull_request'));
    const words = await call('get_tool_schema', { tool: 'send slack message' });
    assert.equal(words.json.suggestions[0], 'slack_post_message');
  });
});

describe('catalog changes', () => {
  it('rebuilds the index when the catalog array changes, not on every call', async () => {
    const added: CatalogTool = {
      name: 'pagerduty_trigger_incident',
      integration: 'pagerduty',
      integrationDisplayName: 'PagerDuty',
      description: 'Pages the on-call engineer.',
      inputSchema: { type: 'object', properties: {} },
    };
    assert.deepEqual((await call('search_tools', { query: 'page the on-call engineer' })).json.tools, []);
    catalog = [...SYNTHETIC_CATALOG, added];
    const { json } = await call('search_tools', { query: 'page the on-call engineer' });
    assert.equal(json.tools[0].name, 'pagerduty_trigger_incident');
    assert.equal((await call('get_tool_schema', { tool: 'pagerduty_trigger_incident' })).isError, false);
    catalog = SYNTHETIC_CATALOG;
    assert.equal((await call('get_tool_schema', { tool: 'pagerduty_trigger_incident' })).isError, true);
    assert.ok(catalogCalls.n > 0);
  });
  it('indexes a catalog once however many searches follow', async () => {
    // indexing reads every inputSchema; searching never does
    let reads = 0;
    const counted = SYNTHETIC_CATALOG.map((t) => ({
      ...t,
      get inputSchema() {
        reads++;
        return t.inputSchema;
      },
    }));
    catalog = counted;
    await call('search_tools', { query: 'issue' });
    const afterBuild = reads;
    assert.equal(afterBuild, SYNTHETIC_CATALOG.length);
    for (let i = 0; i < 5; i++) await call('search_tools', { query: `issue ${i}` });
    assert.equal(reads, afterBuild);
    catalog = SYNTHETIC_CATALOG;
  });
});
