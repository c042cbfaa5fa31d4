/**
 * @module test/host/transport/request-bounds
 * What one HTTP request may do, whatever it holds. A key revoked while its request runs stops the
 * request from starting more executions (MCP and REST; revoked on this server, or in the database
 * as another replica or the CLI does it). A JSON-RPC batch of execute_tools calls runs at most
 * requests.maxBatch executions together, and shares one requests.maxBatchResultBytes budget.
 * Arguments over the plugin's maxArgsBytes are refused before the schema walks them. The
 * upstream is a slow loopback server that counts what reaches it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { jsonLengthOver, VALIDATION_BUDGET } from '../../../host/engine/validate-args.js';
import type { UserStore } from '../../../host/storage/users.js';
import { authenticateCaller, KEY_RECHECK_MS } from '../../../host/transport/caller-auth.js';
import type { FastifyRequest } from 'fastify';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { waitFor } from '../../helpers/wait-for.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const UPSTREAM_DELAY_MS = 300;

// Assertions read arbitrary JSON.
type Json = any;

const toolsCall = (id: number, args: Json): Json => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'execute_tools', arguments: args },
});
const batchOf = (run: string, n: number): Json => ({
  executions: Array.from({ length: n }, (_, i) => ({ tool: 'http_get', args: { path: `/${run}/${i}` } })),
});

function postMcp(gw: TestGateway, body: unknown, apiKey: string): Promise<Response> {
  return fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${apiKey}`,
    },
    body: JSON.stringify(body),
  });
}

describe('bounds of one request', () => {
  let gw: TestGateway;
  let upstream: Upstream;

  before(async () => {
    upstream = await startUpstream(async () => {
      await new Promise((r) => setTimeout(r, UPSTREAM_DELAY_MS));
      return { json: { ok: true } };
    });
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      upstreams: { 'https://api.fixture.test': upstream.origin },
      workers: 2,
      policy: { sandbox: { maxWorkerShare: 1 }, requests: { maxBatch: 50, maxBatchResultBytes: 4096 } },
      env: { FIXTURE_HTTP_CLIENT_ID: 'cid', FIXTURE_HTTP_CLIENT_SECRET: 'csecret' },
    });
    await gw.connect('fixture-http', { token: 'tok-bounds' });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const reached = (run: string): number => upstream.requests.filter((r) => r.path.startsWith(`/${run}/`)).length;
  const newKey = async (): Promise<{ key: string; id: string }> => {
    const { key, info } = await gw.gateway.users.createApiKey(gw.user.id, 'revoked mid-request');
    return { key, id: info.id };
  };

  /** Items of a finished batch: those that ran reached the upstream; the rest were refused, and stayed refused. */
  function checkStopped(run: string, items: Json[], n: number): void {
    assert.equal(items.length, n, 'one item per execution');
    const codes = items.map((i) => (i.result ? 'ran' : i.code));
    const refused = codes.filter((c) => c === 'GW_ERR_ENGINE_KEY_REVOKED').length;
    assert.ok(refused > 0, `no execution was refused after the revocation: ${codes.join(',')}`);
    assert.equal(codes.filter((c) => c === 'ran').length + refused, n, codes.join(','));
    assert.equal(reached(run), n - refused, 'only the executions that ran reached the upstream');
    const refusedItem = items.find((i) => i.code === 'GW_ERR_ENGINE_KEY_REVOKED');
    assert.match(refusedItem.error, /API key of this request was revoked while it ran; this execution was not started/);
  }

  it('a key revoked on this server while its MCP batch runs: the executions not yet started are refused', async () => {
    const { key, id } = await newKey();
    const answer = postMcp(gw, toolsCall(1, batchOf('mcp-here', 40)), key);
    await waitFor('the first requests to reach the upstream', () => reached('mcp-here') > 0);
    assert.equal(await gw.gateway.users.revokeApiKey(gw.user.id, id), true);
    const res = await answer;
    assert.equal(res.status, 200);
    const items = JSON.parse(((await res.json()) as Json).result.content[0].text).results as Json[];
    checkStopped('mcp-here', items, 40);
    // at most the executions in flight when it was revoked, a wave of 8, ran
    assert.ok(reached('mcp-here') <= 8, `${reached('mcp-here')} reached the upstream`);
    const rows = await gw.db.all<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_events WHERE error_code = 'GW_ERR_ENGINE_KEY_REVOKED' AND user_id = ?",
      [gw.user.id],
    );
    assert.equal(
      Number(rows[0]?.n),
      items.filter((i) => i.code === 'GW_ERR_ENGINE_KEY_REVOKED').length,
      'each refusal is audited',
    );
    assert.equal(
      (await postMcp(gw, toolsCall(2, batchOf('mcp-here-after', 1)), key)).status,
      401,
      'a new request with the key is refused',
    );
  });

  it('a key revoked in the database (another replica, the CLI) while its REST batch runs: refused within a second', async () => {
    const { key, id } = await newKey();
    const answer = fetch(`${gw.url}/rest/fixture-http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(batchOf('rest-elsewhere', 50)),
    });
    await waitFor('the first requests to reach the upstream', () => reached('rest-elsewhere') > 0);
    // not through this server's UserStore: it learns of it only from the database
    await gw.db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [Date.now(), id]);
    const res = await answer;
    assert.equal(res.status, 200);
    const items = ((await res.json()) as Json).results as Json[];
    checkStopped('rest-elsewhere', items, 50);
  });

  it('a JSON-RPC batch of execute_tools holding more than maxBatch executions together is refused whole; one within it runs', async () => {
    const over = [toolsCall(11, batchOf('split-over', 30)), toolsCall(12, batchOf('split-over', 21))];
    const res = await postMcp(gw, over, gw.apiKey);
    assert.equal(res.status, 400);
    const body = (await res.json()) as Json;
    assert.equal(body.error.code, -32600);
    assert.equal(body.id, null);
    assert.equal(
      body.error.message,
      'Invalid Request: the execute_tools calls of one batch may hold at most 50 executions together (requests.maxBatch); these 2 hold 51. Send them in separate requests.',
    );
    await new Promise((r) => setTimeout(r, UPSTREAM_DELAY_MS));
    assert.equal(reached('split-over'), 0, 'none of it ran');

    const within = await postMcp(
      gw,
      [toolsCall(13, batchOf('split-ok', 25)), toolsCall(14, batchOf('split-ok', 25))],
      gw.apiKey,
    );
    assert.equal(within.status, 200);
    const answers = (await within.json()) as Json[];
    assert.deepEqual(answers.map((a) => a.id).sort(), [13, 14]);
    assert.equal(reached('split-ok'), 50);
  });

  it('the execute_tools calls of one POST share one result budget', async () => {
    // 4096 bytes for the whole POST: each call alone fits (~3,000 bytes: the text and the args echoed), both together do not
    const echo = (id: number): Json =>
      toolsCall(id, { executions: [{ tool: 'echo_args', args: { text: 'x'.repeat(1500), times: 1 } }] });
    const alone = await postMcp(gw, echo(21), gw.apiKey);
    assert.ok(
      JSON.parse(((await alone.json()) as Json).result.content[0].text).results[0].result,
      'one call alone fits its budget',
    );
    const res = await postMcp(gw, [echo(22), echo(23)], gw.apiKey);
    assert.equal(res.status, 200);
    const codes = ((await res.json()) as Json[]).map((a) => {
      const item = JSON.parse(a.result.content[0].text).results[0];
      return item.result ? 'ok' : item.code;
    });
    assert.deepEqual(codes.sort(), ['GW_ERR_RESULT_BATCH_TOO_LARGE', 'ok']);
  });
});

describe('arguments over maxArgsBytes', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { plugins: { 'fixture-echo': { limits: { maxArgsBytes: 1024 } } } },
    });
  });
  after(async () => gw?.close());

  it('are refused before validation, audited and counted, and the handler never runs', async () => {
    // a million-item array would have taken seconds of the event loop to validate
    const item = await gw.execute('echo_args', { text: 'x'.repeat(2000), times: 1 });
    assert.equal(item.code, 'GW_ERR_SANDBOX_ARGS_TOO_LARGE');
    assert.equal(item.error, 'the arguments are larger than 1024 bytes');
    const huge = await gw.rest('fixture-echo', {
      tool: 'echo_args',
      args: { text: 'x', times: 1, extra: Array.from({ length: 200_000 }, () => 'yy') },
    });
    assert.equal(huge.json.code, 'GW_ERR_SANDBOX_ARGS_TOO_LARGE', 'refused before the schema saw the unknown key');
    assert.equal(
      huge.status,
      413,
      "a single REST call: the caller's request is too large, not the plugin at fault (502)",
    );
    assert.equal(huge.headers.get('retry-after'), null);
    assert.deepEqual((await gw.execute('echo_args', { text: 'fits', times: 2 })).result, {
      text: 'fitsfits',
      args: { text: 'fits', times: 2 },
    });
    const rows = await gw.db.all<{ success: number; error_code: string | null }>(
      "SELECT success, error_code FROM audit_events WHERE tool = 'echo_args' ORDER BY at",
    );
    assert.deepEqual(
      rows.map((r) => r.error_code),
      ['GW_ERR_SANDBOX_ARGS_TOO_LARGE', 'GW_ERR_SANDBOX_ARGS_TOO_LARGE', null],
    );
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(
      metrics,
      /workbench_tool_executions_refused_total\{reason="args_too_large",integration="fixture-echo"\} 2/,
    );
    assert.match(
      metrics,
      /workbench_tool_executions_total\{integration="fixture-echo",tool="echo_args",success="true"\} 1/,
      'only the one that fits ran',
    );
  });

  it('property: the bound never refuses arguments whose JSON fits, and refuses those far over', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 4000 }), (value, limit) => {
        const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
        if (jsonLengthOver(value, limit)) assert.ok(bytes > limit, `${bytes} bytes refused at ${limit}`);
        // escapes, numbers and multi-byte characters make JSON up to ~6× longer than the bound counts
        if (bytes > 6 * limit + 6) assert.ok(jsonLengthOver(value, limit), `${bytes} bytes passed at ${limit}`);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the work of validating one call', () => {
  let gw: TestGateway;
  let root: string;
  before(async () => {
    // an anyOf of 1,000 options under items: 100,000 integers against it (200 KB, within maxArgsBytes)
    // ran the host out of memory
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-wide-'));
    const dir = path.join(root, 'wide-anyof');
    fs.mkdirSync(dir);
    const options = Array.from({ length: 1000 }, (_, i) => ({ const: i }));
    const manifest = {
      name: 'wide',
      version: '1.0.0',
      displayName: 'Wide anyOf',
      description: 'One tool whose items may be any of 1,000 constants.',
      auth: { type: 'none' },
      egress: [],
      tools: [
        {
          name: 'wide_count',
          description: 'Counts the ids.',
          inputSchema: {
            type: 'object',
            properties: { ids: { type: 'array', items: { anyOf: options } } },
            required: ['ids'],
          },
        },
      ],
    };
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    fs.writeFileSync(
      path.join(dir, 'plugin.js'),
      'export default { wide_count: async (ctx, args) => ({ n: args.ids.length }) };',
    );
    // a pattern of 3,003 RE2 instructions: 15 s over a 250,000-character argument, unbounded
    const patterned = path.join(root, 'long-pattern');
    fs.mkdirSync(patterned);
    fs.writeFileSync(
      path.join(patterned, 'manifest.json'),
      JSON.stringify({
        ...manifest,
        name: 'long-pattern',
        displayName: 'Long pattern',
        tools: [
          {
            name: 'pattern_check',
            description: 'Checks a text.',
            inputSchema: {
              type: 'object',
              properties: { text: { type: 'string', pattern: '\\w{1000}\\w{1000}\\w{1000}$' } },
              required: ['text'],
            },
          },
        ],
      }),
    );
    fs.writeFileSync(
      path.join(patterned, 'plugin.js'),
      'export default { pattern_check: async (ctx, args) => ({ n: args.text.length }) };',
    );
    gw = await startGateway({ plugins: [], pluginDirs: [root] });
  });
  after(async () => {
    await gw?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('is bounded: values times the sub-schemas each may be checked against, refused before zod runs', async () => {
    const size = gw.gateway.registry.tool('wide_count')?.tool.schemaSize ?? 0;
    assert.ok(size > 1000, `schema size ${size}`);
    const maxValues = Math.floor(VALIDATION_BUDGET / size);
    const refused = await gw.execute('wide_count', { ids: Array.from({ length: 100_000 }, () => 7) });
    assert.equal(refused.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
    assert.equal(
      refused.error,
      `Invalid arguments for wide_count: (root): the arguments hold more than ${maxValues} values, more than this tool's schema (${size} sub-schemas per value) may check in one call; send fewer`,
    );
    const ok = await gw.execute('wide_count', { ids: Array.from({ length: 50 }, (_, i) => i) });
    assert.deepEqual(ok.result, { n: 50 });
    const bad = await gw.execute('wide_count', { ids: [1, 2, 5000] });
    assert.equal(bad.code, 'GW_ERR_VALIDATION_INVALID_ARGS', 'small calls are still validated');
  });

  it('is bounded for patterns too: RE2 steps (instructions × characters) past the budget fail the check without running it', async () => {
    const long = await gw.execute('pattern_check', { text: 'a'.repeat(200_000) });
    assert.equal(long.code, 'GW_ERR_VALIDATION_INVALID_ARGS');
    assert.match(
      long.error ?? '',
      /^Invalid arguments for pattern_check: text: is too long to check against the pattern .* within the gateway's budget for one call \(25000000 steps: \d+ per character\); send shorter strings$/,
    );
    assert.deepEqual(
      (await gw.execute('pattern_check', { text: 'b'.repeat(3000) })).result,
      { n: 3000 },
      'within the budget the pattern is checked',
    );
    assert.match(
      (await gw.execute('pattern_check', { text: 'b'.repeat(2999) })).error ?? '',
      /text: must match the pattern/,
    );
  });
});

describe('oversized results one user may keep stored', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { resultCap: { maxChars: 5000, maxStoredCharsPerUser: 150_000 } },
    });
  });
  after(async () => gw?.close());

  /** One echo_big of ~60,000 characters over MCP: its item (a stub, or why it was not stored). */
  async function bigResult(apiKey: string): Promise<Json> {
    const res = await postMcp(
      gw,
      toolsCall(1, { executions: [{ tool: 'echo_big', args: { chars: 60_000 } }] }),
      apiKey,
    );
    return JSON.parse(((await res.json()) as Json).result.content[0].text).results[0];
  }

  it('are bounded per user (resultCap.maxStoredCharsPerUser): past it a result says why it was not stored; other users are unaffected', async () => {
    const first = await bigResult(gw.apiKey);
    const second = await bigResult(gw.apiKey);
    assert.ok(
      first.result?.continuationId && second.result?.continuationId,
      JSON.stringify([first, second]).slice(0, 300),
    );
    const rows = await gw.db.all<{ n: number | string }>(
      'SELECT SUM(total_chars) AS n FROM result_pages WHERE user_id = ?',
      [gw.user.id],
    );
    const used = Number(rows[0]?.n);
    assert.equal(used, first.result.totalChars + second.result.totalChars);
    const third = await bigResult(gw.apiKey);
    assert.equal(third.code, 'GW_ERR_RESULT_NOT_STORED');
    assert.match(
      third.error,
      new RegExp(
        `^This result \\(\\d+ characters\\) is over the 5000-character response budget and was not stored for continue_tool_result: your stored results are at their quota \\(${used} of 150000 characters\\) until they expire\\.`,
      ),
    );
    // the stored ones still page
    const page = await postMcp(
      gw,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'continue_tool_result', arguments: { continuationId: first.result.continuationId, part: 1 } },
      },
      gw.apiKey,
    );
    assert.ok(JSON.parse(((await page.json()) as Json).result.content[0].text).chunk.length > 0);
    const other = await gw.createUser('other-quota@example.com');
    assert.ok((await bigResult(other.apiKey)).result?.continuationId, 'another user has a quota of its own');
  });
});

describe("a request's key check", () => {
  it('keeps what it last knew when the database does not answer, and asks again before the next execution', async () => {
    let live: boolean | Error = true;
    let asked = 0;
    const users = {
      authenticateKey: async () => ({ user: { id: 'u1', email: 'a@example.com', tenant: 't' }, keyId: 'k1' }),
      revokedHere: () => false,
      keyIsLive: async () => {
        asked++;
        if (live instanceof Error) throw live;
        return live;
      },
    } as unknown as UserStore;
    const request = { headers: { authorization: 'Bearer wb_test' } } as unknown as FastifyRequest;
    const caller = await authenticateCaller(users, request);
    assert.ok(caller);
    const realNow = Date.now;
    let now = realNow();
    Date.now = () => now;
    try {
      assert.equal(await caller.keyValid(), true);
      assert.equal(asked, 0, 'fresh from authentication: no database read');
      now += KEY_RECHECK_MS + 1;
      live = new Error('database is locked');
      assert.equal(await caller.keyValid(), true, 'a failed read keeps the last answer');
      assert.equal(await caller.keyValid(), true);
      assert.equal(asked, 2, 'and asks again next time');
      live = false;
      assert.equal(await caller.keyValid(), false, 'revoked elsewhere: refused');
      live = true;
      now += KEY_RECHECK_MS + 1;
      assert.equal(await caller.keyValid(), false, 'once refused, refused for the rest of the request');
    } finally {
      Date.now = realNow;
    }
  });
});
