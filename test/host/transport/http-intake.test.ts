/**
 * @module test/host/transport/http-intake.test
 * What a client must do before the server spends memory or time on it, through real sockets to a
 * real gateway: a POST without a valid key is answered 401 before its body is read, and the
 * connection is closed (no key, no buffered body); a request must arrive whole within
 * `requests.receiveTimeoutMs` (408 and closed), so a client trickling a body can hold neither its
 * connection nor a shutdown; a user may have `requests.maxInFlightPerUser` POSTs in flight (429
 * past it); every answer says `Cache-Control: no-store` and `nosniff`; and one
 * user may have only MAX_WAITS_PER_USER wait_for_connection calls waiting at once, all of which
 * answer at once when the server shuts down.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MAX_WAITS_PER_USER } from '../../../host/connections/meta-tools.js';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { callJson } from '../../helpers/mcp-call.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { waitFor } from '../../helpers/wait-for.js';

const FAULT_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'fault-plugins');

/** Sends `head` and the first part of a body on a raw socket, and resolves with all the server wrote once it closes the connection. */
function sendPartial(url: string, head: string, firstPart: string): { answer: Promise<string>; socket: net.Socket } {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const answer = new Promise<string>((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
  socket.on('connect', () => socket.write(head + firstPart));
  return { answer, socket };
}

const post = (url: string, path: string, headers: Record<string, string>, length: number): string =>
  `POST ${path} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n` +
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('') +
  '\r\n';

describe('HTTP intake', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: ['github', 'newrelic'], policy: { requests: { receiveTimeoutMs: 1000 } } });
  });
  after(() => gw.close());

  for (const path of ['/rest/github', '/mcp']) {
    it(
      `answers a POST ${path} without a valid key before reading its body, and closes the connection`,
      { timeout: 20_000 },
      async () => {
        for (const headers of [{}, { Authorization: 'Bearer wb_not-a-key' }] as Record<string, string>[]) {
          // 4 MB announced, a few bytes sent: the rest never comes
          const { answer } = sendPartial(gw.url, post(gw.url, path, headers, 4_000_000), '{"to');
          const text = await answer;
          assert.match(text, /^HTTP\/1\.1 401 /);
          assert.match(text, /\r\nconnection: close\r\n/i);
        }
      },
    );
  }

  it(
    'gives a client that trickles a body receiveTimeoutMs to finish, then answers 408 and closes',
    { timeout: 20_000 },
    async () => {
      const { answer } = sendPartial(
        gw.url,
        post(gw.url, '/rest/github', { Authorization: `Bearer ${gw.apiKey}` }, 100),
        '{"tool":',
      );
      const text = await answer;
      assert.match(text, /^HTTP\/1\.1 408 /);
    },
  );

  it('says no-store and nosniff on every answer', async () => {
    const auth = { authorization: `Bearer ${gw.apiKey}` };
    for (const res of [
      await fetch(`${gw.url}/rest`, { headers: auth }),
      await fetch(`${gw.url}/rest/github`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{}',
      }),
      await fetch(`${gw.url}/rest/nothing`, { headers: auth }),
      await fetch(`${gw.url}/healthz`),
      await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    ]) {
      await res.arrayBuffer();
      assert.equal(res.headers.get('cache-control'), 'no-store', res.url);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', res.url);
    }
  });
});

describe('requests in flight per user', () => {
  it(
    'refuses a user past requests.maxInFlightPerUser with 429 before reading the body, and counts each request until its answer ends',
    { timeout: 30_000 },
    async () => {
      const gw = await startGateway({ plugins: ['github'], policy: { requests: { maxInFlightPerUser: 2 } } });
      try {
        const other = await gw.createUser('other@example.com');
        const mine = { Authorization: `Bearer ${gw.apiKey}` };
        // two requests of this user held in flight: their bodies never finish
        const held = [0, 1].map(() => sendPartial(gw.url, post(gw.url, '/rest/github', mine, 1000), '{"tool":'));
        const refused = async (): Promise<Response> =>
          fetch(`${gw.url}/rest/github`, {
            method: 'POST',
            headers: { ...mine, 'content-type': 'application/json' },
            body: JSON.stringify({ tool: 'nothing' }),
          });
        // the held requests reach the server in their own time: wait until both count
        let third = await refused();
        for (let i = 0; i < 100 && third.status !== 429; i++) third = await refused();
        assert.equal(third.status, 429);
        assert.equal(third.headers.get('retry-after'), '1');
        const body = (await third.json()) as { code: string; message: string };
        assert.equal(body.code, 'GW_ERR_TRANSPORT_TOO_MANY_REQUESTS');
        assert.match(body.message, /already has 2 requests in flight/);
        const overMcp = await fetch(`${gw.url}/mcp`, {
          method: 'POST',
          headers: { ...mine, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        assert.equal(overMcp.status, 429);
        assert.match(
          ((await overMcp.json()) as { error: { message: string } }).error.message,
          /already has 2 requests in flight/,
        );
        // another user is not counted with this one
        const theirs = await gw.rest('github', { tool: 'nothing' }, other.apiKey);
        assert.notEqual(theirs.status, 429, JSON.stringify(theirs.json));
        // a held request that ends (its client went away) gives its place back
        held[0]?.socket.destroy();
        let next = await refused();
        for (let i = 0; i < 100 && next.status === 429; i++) next = await refused();
        assert.notEqual(next.status, 429);
        held[1]?.socket.destroy();
      } finally {
        await gw.close();
      }
    },
  );
});

describe('wait_for_connection', () => {
  it(
    `lets one user have ${MAX_WAITS_PER_USER} waits at once, and ends them when the server shuts down`,
    { timeout: 60_000 },
    async () => {
      const gw = await startGateway({ plugins: ['newrelic'] });
      try {
        const client = await gw.mcpClient();
        const link = await callJson(client, 'connect', { integration: 'newrelic' });
        assert.equal(link.isError, false, JSON.stringify(link.json));
        const other = await gw.createUser('other@example.com');
        const otherClient = await gw.mcpClient(other.apiKey);
        const waits = Array.from({ length: MAX_WAITS_PER_USER + 1 }, () =>
          callJson(client, 'wait_for_connection', { connectionId: link.json.connectionId, timeoutSec: 120 }),
        );
        // the one over the bound answers at once; the others wait for the link (two minutes)
        const first = await Promise.race(waits);
        assert.equal(first.isError, true);
        assert.equal(first.json.code, 'GW_ERR_POLICY_RATE_LIMITED');
        assert.match(
          first.json.error ?? first.json.message,
          new RegExp(`At most ${MAX_WAITS_PER_USER} wait_for_connection calls of one user may wait at once`),
        );
        // another user's wait is its own (an unknown link: answered, not refused for the bound)
        const theirs = await callJson(otherClient, 'wait_for_connection', {
          connectionId: link.json.connectionId,
          timeoutSec: 1,
        });
        assert.equal(theirs.json.code, 'GW_ERR_CONNECTION_LINK_INVALID');
        // the server itself (the helper's close() would end the clients first)
        await gw.gateway.close();
        const answers = await Promise.all(waits);
        const timedOut = answers.filter((a) => a.json.status === 'TIMEOUT');
        assert.equal(timedOut.length, MAX_WAITS_PER_USER, JSON.stringify(answers));
        for (const a of timedOut) assert.match(a.json.message, /shutting down; call wait_for_connection again/);
      } finally {
        await gw.close();
      }
    },
  );
});

describe('what counts as a request in flight', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let release: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  const held = (): number => upstream.requests.filter((r) => (r.query.get('tag') ?? '').startsWith('held')).length;
  const inFlight = (): number => gw.gateway.requests.inFlight(gw.user.id);
  const slow = (tag: string): string => JSON.stringify({ tool: 'faults_slow', args: { tag } });
  const restCall = (tag: string): Promise<Response> =>
    fetch(`${gw.url}/rest/fixture-faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.apiKey}` },
      body: slow(tag),
    });
  const raw = (body: string): string =>
    post(gw.url, '/rest/fixture-faults', { Authorization: `Bearer ${gw.apiKey}` }, Buffer.byteLength(body)) + body;

  before(async () => {
    upstream = await startUpstream(async (req) => {
      if ((req.query.get('tag') ?? '').startsWith('held')) await gate;
      return { json: { ok: true } };
    });
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FAULT_PLUGINS],
      upstreams: { 'https://api.faults.test': upstream.origin },
      policy: { requests: { maxInFlightPerUser: 2 } },
    });
  });
  after(async () => {
    release();
    await gw?.close();
    await upstream?.close();
  });
  const hold = (): void => {
    upstream.requests.length = 0;
    gate = new Promise<void>((resolve) => (release = resolve));
  };

  it('a REST request whose client hung up counts until its executions end', { timeout: 30_000 }, async () => {
    hold();
    const gone = sendPartial(gw.url, raw(slow('held-gone')), '');
    await waitFor('the request to reach the upstream', () => held() === 1);
    gone.socket.destroy();
    await gone.answer;
    const kept = restCall('held-kept');
    await waitFor('the second request to reach the upstream', () => held() === 2);
    // the hung-up request's execution is still held at the upstream: it still counts
    const third = await restCall('quick');
    assert.equal(third.status, 429, await third.text());
    release();
    assert.equal((await kept).status, 200);
    await waitFor('both to be counted out', () => inFlight() === 0);
    assert.equal((await restCall('quick')).status, 200);
  });

  it(
    'a response pipelined behind another on a connection the client drops is counted out',
    { timeout: 30_000 },
    async () => {
      hold();
      const first = slow('held-first');
      const second = JSON.stringify({ tool: 'faults_fast', args: { tag: 'pipelined' } });
      const pipelined = sendPartial(gw.url, raw(first) + raw(second), '');
      await waitFor('the first request to reach the upstream', () => held() === 1);
      await waitFor('both requests to be counted', () => inFlight() === 2);
      pipelined.socket.destroy();
      await pipelined.answer;
      release();
      await waitFor('both to be counted out', () => inFlight() === 0);
    },
  );

  it('an MCP request in JSON mode whose client hung up is counted out', { timeout: 30_000 }, async () => {
    hold();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'execute_tools',
        arguments: { executions: [{ tool: 'faults_slow', args: { tag: 'held-json' } }] },
      },
    });
    const gone = sendPartial(
      gw.url,
      post(gw.url, '/mcp', { Authorization: `Bearer ${gw.apiKey}` }, Buffer.byteLength(body)) + body,
      '',
    );
    await waitFor('the call to reach the upstream', () => held() === 1);
    gone.socket.destroy();
    await gone.answer;
    release();
    await waitFor('the request to be counted out', () => inFlight() === 0);
  });

  it('a request whose client hung up while its key was being checked is counted out', { timeout: 30_000 }, async () => {
    const users = gw.gateway.users;
    const check = users.authenticateKey.bind(users);
    let checking = 0;
    let checked = 0;
    users.authenticateKey = async (key: string) => {
      checking++;
      await new Promise((r) => setTimeout(r, 200));
      try {
        return await check(key);
      } finally {
        checked++;
      }
    };
    try {
      const gone = [0, 1, 2].map(() => sendPartial(gw.url, raw(slow('quick')).slice(0, -5), ''));
      await waitFor('the keys to be checked', () => checking === 3);
      for (const g of gone) g.socket.destroy();
      await Promise.all(gone.map((g) => g.answer));
      // the checks finish after the clients went
      await waitFor('the keys to have been checked', () => checked === 3);
      await new Promise((r) => setImmediate(r));
    } finally {
      users.authenticateKey = check;
    }
    assert.equal(inFlight(), 0);
    assert.equal((await restCall('quick')).status, 200);
  });

  it('a user at its limit may send at most 4 notification-only POSTs at once', { timeout: 30_000 }, async () => {
    hold();
    const calls = [restCall('held-a'), restCall('held-b')];
    await waitFor('two requests to be held', () => held() === 2);
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    // four trickling notification bodies are let in (and read); the fifth is refused at once
    const trickling = [0, 1, 2, 3].map(() =>
      sendPartial(
        gw.url,
        post(gw.url, '/mcp', { Authorization: `Bearer ${gw.apiKey}` }, Buffer.byteLength(note)),
        note.slice(0, 10),
      ),
    );
    const fifth = sendPartial(
      gw.url,
      post(gw.url, '/mcp', { Authorization: `Bearer ${gw.apiKey}` }, Buffer.byteLength(note)),
      note.slice(0, 10),
    );
    assert.match(await fifth.answer, /^HTTP\/1\.1 429 /);
    for (const t of trickling) t.socket.destroy();
    release();
    for (const c of calls) assert.equal((await c).status, 200);
  });

  it(
    'a user at its limit may still send notifications (a cancellation), but no request',
    { timeout: 30_000 },
    async () => {
      hold();
      const calls = [restCall('held-1'), restCall('held-2')];
      await waitFor('two requests to be held', () => held() === 2);
      const mcp = (body: unknown): Promise<Response> =>
        fetch(`${gw.url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${gw.apiKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify(body),
        });
      const cancel = await mcp({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 7, reason: 'no longer needed' },
      });
      assert.equal(cancel.status, 202, await cancel.text());
      const request = await mcp([
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } },
        { jsonrpc: '2.0', id: 8, method: 'tools/list' },
      ]);
      assert.equal(request.status, 429);
      assert.match(
        ((await request.json()) as { error: { message: string } }).error.message,
        /already has 2 requests in flight/,
      );
      release();
      for (const c of calls) assert.equal((await c).status, 200);
    },
  );
});
