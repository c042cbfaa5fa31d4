/**
 * @module test/host/transport/mcp-cancellation
 * MCP cancellation of a running execute_tools batch: a `notifications/cancelled` from the same
 * caller (over stateless HTTP, in a later POST; over stdio, on the same connection) stops the
 * executions not yet started and the ctx.http requests of the running ones, and every execution is
 * still audited. Another caller's cancellation, an ambiguous one and a dropped connection stop
 * nothing. The upstream is a slow loopback server that counts what reaches it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { callerIdentity, McpCancellations } from '../../../host/transport/mcp-cancellation.js';
import { startGateway, stdioCommand, type StartGatewayOptions, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { waitFor } from '../../helpers/wait-for.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');
const UPSTREAM_DELAY_MS = 400;
const BATCH = 24;

// Assertions read arbitrary JSON.
type Json = any;

const batchOf = (run: string): Json => ({
  executions: Array.from({ length: BATCH }, (_, i) => ({ tool: 'http_get', args: { path: `/${run}/${i}` } })),
});

/** A gateway with the HTTP fixture plugin connected, in front of an upstream answering after UPSTREAM_DELAY_MS. */
async function slowGateway(
  options: Pick<StartGatewayOptions, 'workers' | 'policy' | 'env'>,
  token: string,
): Promise<{ gw: TestGateway; upstream: Upstream }> {
  const upstream = await startUpstream(async () => {
    await new Promise((r) => setTimeout(r, UPSTREAM_DELAY_MS));
    return { json: { ok: true } };
  });
  const gw = await startGateway({
    plugins: [],
    pluginDirs: [FIXTURES],
    upstreams: { 'https://api.fixture.test': upstream.origin },
    ...options,
  });
  await gw.connect('fixture-http', { token });
  return { gw, upstream };
}

/** A raw POST /mcp, as a client that takes both answer types sends it. */
function postMcp(gw: TestGateway, body: unknown, apiKey = gw.apiKey, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${apiKey}`,
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

describe('cancelling a running execute_tools batch', () => {
  let gw: TestGateway;
  let upstream: Upstream;

  before(async () => {
    // one user and one plugin may take the whole sandbox: a batch's first 8 executions run at once
    ({ gw, upstream } = await slowGateway(
      {
        workers: 2,
        policy: { sandbox: { maxWorkerShare: 1, maxUserShare: 1 } },
        env: { FIXTURE_HTTP_CLIENT_ID: 'cid', FIXTURE_HTTP_CLIENT_SECRET: 'csecret' },
      },
      'tok-cancel',
    ));
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const reached = (run: string): number => upstream.requests.filter((r) => r.path.startsWith(`/${run}/`)).length;

  const postRaw = (body: unknown, apiKey = gw.apiKey, signal?: AbortSignal): Promise<Response> =>
    postMcp(gw, body, apiKey, signal);
  const toolsCall = (id: number, args: Json): Json => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'execute_tools', arguments: args },
  });
  const cancelNote = (requestId: number): Json => ({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, reason: 'the user pressed stop' },
  });

  /** This user's http_get audit rows since a time, once all BATCH executions of the run are recorded. */
  async function settledRows(since: number): Promise<{ success: number; error_code: string | null }[]> {
    let rows: { success: number; error_code: string | null }[] = [];
    await waitFor('every execution to be audited', async () => {
      rows = await gw.db.all(
        "SELECT success, error_code FROM audit_events WHERE tool = 'http_get' AND user_id = ? AND at >= ?",
        [gw.user.id, since],
      );
      return rows.length >= BATCH;
    });
    return rows;
  }

  it('the SDK client aborting its call stops the batch: no new executions, running requests stopped, all audited', async () => {
    const since = Date.now();
    const client = await gw.mcpClient();
    try {
      const abort = new AbortController();
      const call = client.callTool({ name: 'execute_tools', arguments: batchOf('sdk') }, undefined, {
        signal: abort.signal,
      });
      await waitFor('the first requests to reach the upstream', () => reached('sdk') > 0);
      abort.abort('the user pressed stop');
      await assert.rejects(call);
      const rows = await settledRows(since);
      assert.equal(rows.length, BATCH, 'one audit event per execution');
      const cancelledRows = rows.filter((r) => r.error_code === 'GW_ERR_ENGINE_CANCELLED');
      assert.ok(
        cancelledRows.length >= BATCH - 8,
        `at least the ${BATCH - 8} executions not started are cancelled (got ${cancelledRows.length})`,
      );
      await new Promise((r) => setTimeout(r, UPSTREAM_DELAY_MS * 2));
      assert.ok(reached('sdk') <= 8, `only the first wave reached the upstream (${reached('sdk')} of ${BATCH})`);
    } finally {
      await client.close();
    }
  });

  it('answers a raw cancelled POST with 202, and the cancelled request still gets its (cancelled) answer', async () => {
    const since = Date.now();
    const answer = postRaw(toolsCall(41, batchOf('raw')));
    await waitFor('the first requests to reach the upstream', () => reached('raw') > 0);
    const note = await postRaw(cancelNote(41));
    assert.equal(note.status, 202);
    await note.text();
    const res = await answer;
    assert.equal(res.status, 200);
    const body = (await res.json()) as Json;
    const items = JSON.parse(body.result.content[0].text).results as Json[];
    assert.equal(items.length, BATCH, 'still one item per execution, in order');
    assert.ok(
      items.every((i) => i.code === 'GW_ERR_ENGINE_CANCELLED'),
      JSON.stringify(items.slice(0, 3)),
    );
    assert.equal(body.result.isError, true);
    assert.ok(items.slice(8).every((i) => /before it started/.test(i.error)));
    // the running ones keep what their handler said when its request was stopped
    assert.ok(
      items
        .slice(0, 8)
        .every((i) =>
          /^Cancelled by the client while running; its ctx\.http requests were stopped; the handler then failed \(GW_ERR_SANDBOX_HANDLER_THREW\): .+/.test(
            i.error,
          ),
        ),
      JSON.stringify(items.slice(0, 2)),
    );
    assert.equal((await settledRows(since)).length, BATCH);
  });

  it("another user's cancellation with the same id, and an ambiguous one, stop nothing", async () => {
    const other = await gw.createUser('other@example.com');
    const since = Date.now();
    const answer = postRaw(toolsCall(7, batchOf('foreign')));
    await waitFor('the first requests to reach the upstream', () => reached('foreign') > 0);
    const note = await postRaw(cancelNote(7), other.apiKey);
    assert.equal(note.status, 202);
    await note.text();
    const res = (await (await answer).json()) as Json;
    const items = JSON.parse(res.result.content[0].text).results as Json[];
    assert.ok(
      items.every((i) => i.result?.status === 200),
      'every execution ran',
    );
    assert.equal(reached('foreign'), BATCH);
    assert.ok((await settledRows(since)).every((r) => r.success === 1));
  });

  it('a cancellation in a POST the SDK refuses (406, a batch over 100) cancels nothing', async () => {
    const answer = postRaw(toolsCall(61, batchOf('refused')));
    await waitFor('the first requests to reach the upstream', () => reached('refused') > 0);
    const notAcceptable = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${gw.apiKey}` },
      body: JSON.stringify(cancelNote(61)),
    });
    assert.equal(notAcceptable.status, 406);
    await notAcceptable.text();
    const tooLong = await postRaw([
      cancelNote(61),
      ...Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: 1000 + i, method: 'ping' })),
    ]);
    assert.equal(tooLong.status, 400);
    const refusal = (await tooLong.json()) as Json;
    assert.equal(refusal.error.code, -32600);
    assert.match(refusal.error.message, /at most 100 messages \(101 sent\)/);
    const res = (await (await answer).json()) as Json;
    const items = JSON.parse(res.result.content[0].text).results as Json[];
    assert.ok(
      items.every((i) => i.result?.status === 200),
      JSON.stringify(items.filter((i) => !i.result).slice(0, 2)),
    );
    assert.equal(reached('refused'), BATCH);
  });

  it('a dropped connection is not a cancellation: the batch runs to the end', async () => {
    const since = Date.now();
    const drop = new AbortController();
    const answer = postRaw(toolsCall(9, batchOf('dropped')), gw.apiKey, drop.signal);
    await waitFor('the first requests to reach the upstream', () => reached('dropped') > 0);
    drop.abort();
    await assert.rejects(answer);
    const rows = await settledRows(since);
    assert.ok(
      rows.every((r) => r.success === 1),
      JSON.stringify(rows.filter((r) => r.success !== 1).slice(0, 2)),
    );
    assert.equal(reached('dropped'), BATCH);
  });

  it(
    'a cancellation over HTTP ends a wait_for_connection at once, as a dropped connection would',
    { timeout: 20_000 },
    async () => {
      const linked = (await (
        await postRaw({
          jsonrpc: '2.0',
          id: 50,
          method: 'tools/call',
          params: { name: 'connect', arguments: { integration: 'fixture-http', reconnect: true } },
        })
      ).json()) as Json;
      const { connectionId } = JSON.parse(linked.result.content[0].text) as { connectionId: string };
      assert.ok(connectionId, JSON.stringify(linked));
      const answer = postRaw({
        jsonrpc: '2.0',
        id: 51,
        method: 'tools/call',
        params: { name: 'wait_for_connection', arguments: { connectionId, timeoutSec: 120 } },
      });
      await new Promise((r) => setTimeout(r, 300));
      const note = await postRaw(cancelNote(51));
      assert.equal(note.status, 202);
      await note.text();
      // the wait sent a progress notification first, so the answer is an event stream
      const messages = (await (await answer).text())
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)));
      const body = messages.find((m) => m.id === 51);
      assert.ok(body, JSON.stringify(messages));
      const waited = JSON.parse(body.result.content[0].text);
      assert.equal(waited.status, 'TIMEOUT');
      assert.equal(waited.message, 'cancelled by the client');
    },
  );

  it('over stdio, a cancellation on the same connection stops the batch', async () => {
    const policyFile = path.join(gw.dataDir, 'stdio-policy.json');
    fs.writeFileSync(
      policyFile,
      JSON.stringify({
        sandbox: { workers: 2, maxWorkerShare: 1 },
        upstreams: { 'https://api.fixture.test': upstream.origin },
      }),
    );
    const transport = new StdioClientTransport({
      ...stdioCommand(gw, FIXTURES, policyFile),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-cancel-test', version: '0' });
    await client.connect(transport);
    try {
      const since = Date.now();
      const abort = new AbortController();
      const call = client.callTool({ name: 'execute_tools', arguments: batchOf('stdio') }, undefined, {
        signal: abort.signal,
      });
      await waitFor('the first requests to reach the upstream', () => reached('stdio') > 0);
      abort.abort('stop');
      await assert.rejects(call);
      const rows = await settledRows(since);
      assert.ok(rows.filter((r) => r.error_code === 'GW_ERR_ENGINE_CANCELLED').length >= BATCH - 8);
      assert.ok(reached('stdio') <= 8, `${reached('stdio')} reached the upstream`);
    } finally {
      await client.close();
    }
  });
});

describe('cancelling a batch whose executions wait for a sandbox slot', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  before(async () => {
    // one worker with two calls in flight, both for the one user: of a batch's eight executions, six wait in the sandbox's queue
    ({ gw, upstream } = await slowGateway(
      { workers: 1, policy: { sandbox: { maxWorkerShare: 1, maxUserShare: 1, callsPerWorker: 2 } } },
      'tok-queue',
    ));
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('the queued executions never start: they are refused as not started, and only the running two reached the sandbox', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    after(() => void process.off('warning', onWarning));
    const before = gw.gateway.sandbox.stats().completed;
    const answer = postMcp(gw, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'execute_tools',
        arguments: {
          executions: Array.from({ length: 8 }, (_, i) => ({ tool: 'http_get', args: { path: `/queued/${i}` } })),
        },
      },
    });
    await waitFor('the first requests to reach the upstream', () => upstream.requests.length >= 2);
    const note = await postMcp(gw, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
    assert.equal(note.status, 202);
    const body = (await (await answer).json()) as Json;
    const items = JSON.parse(body.result.content[0].text).results as Json[];
    assert.equal(items.length, 8);
    assert.ok(
      items.every((i) => i.code === 'GW_ERR_ENGINE_CANCELLED'),
      JSON.stringify(items),
    );
    const notStarted = items.filter((i) => /before it started/.test(i.error)).length;
    assert.equal(notStarted, 6, JSON.stringify(items.map((i) => i.error)));
    assert.equal(
      gw.gateway.sandbox.stats().completed - before,
      2,
      'only the two running calls went through the sandbox',
    );
    assert.equal(upstream.requests.length, 2);
    // eight executions and six waiting for a slot listen on the request's cancellation at once
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      warnings.filter((w) => /MaxListenersExceeded/.test(w)),
      [],
    );
  });
});

describe('the cancellation registry', () => {
  const body = (id: unknown): unknown => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'execute_tools', arguments: {} },
  });
  const cancel = (requestId: unknown): unknown => ({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId },
  });

  it('matches caller and id exactly, ignores ambiguous and unknown ids, and forgets released requests', () => {
    const reg = new McpCancellations();
    const alice = callerIdentity('u1', 'key-a');
    const aliceOtherKey = callerIdentity('u1', 'key-b');
    const a = reg.track(alice, body(3));
    const b = reg.track(aliceOtherKey, body(3));
    const s = reg.track(alice, body('3'));
    assert.equal(reg.cancel(callerIdentity('u2', 'key-a'), cancel(3)), 0, 'another user');
    assert.equal(reg.cancel(alice, cancel(4)), 0, 'unknown id');
    assert.equal(reg.cancel(alice, cancel(3)), 1);
    assert.equal(a.signalFor(3)?.aborted, true);
    assert.equal(b.signalFor(3)?.aborted, false, 'the same user with another key is another client');
    assert.equal(s.signalFor('3')?.aborted, false, 'the string id "3" is not the number 3');
    const twin = reg.track(aliceOtherKey, body(3));
    assert.equal(reg.cancel(aliceOtherKey, cancel(3)), 0, 'two requests in flight under one id: ambiguous, ignored');
    for (const t of [a, b, s, twin]) t.release();
    assert.equal(reg.size, 0);
    assert.equal(reg.cancel(alice, cancel(3)), 0, 'released');
    assert.equal(
      reg.track(alice, { jsonrpc: '2.0', id: 1, method: 'tools/list' }).signalFor(1),
      undefined,
      'only tools/call is tracked',
    );
    assert.equal(reg.track(alice, body(null)).signalFor(0), undefined);
  });
});
