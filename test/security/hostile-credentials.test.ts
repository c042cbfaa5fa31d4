/**
 * @module test/security/hostile-credentials.test
 * A hostile plugin installed next to legitimate ones hunts for credentials (its own, another
 * plugin's, another user's) through ctx, prototypes, globals, errors, echoed headers and logs, and
 * tries to keep state across calls and users. Two users, two plugins, distinct secrets; every
 * response body, every audit row and every log line is searched for every secret.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type Upstream, type UpstreamReply } from '../helpers/upstream.js';
import { findSecrets, startSecurityGateway, type SecurityGateway } from '../helpers/security-gateway.js';

const tag = randomBytes(6).toString('hex');
const SECRETS = {
  aThief: `SECRET-TOKEN-${tag}-a-thief`,
  aHttp: `SECRET-TOKEN-${tag}-a-http`,
  bThief: `SECRET-TOKEN-${tag}-b-thief`,
  bHttp: `SECRET-TOKEN-${tag}-b-http`,
  env: `SECRET-ENV-${tag}`,
  aUser: `SECRET-USER-${tag}-a`,
  aPassword: `SECRET-PASSWORD-${tag}-a`,
};

interface Caller {
  apiKey: string;
  userId: string;
}

describe('a hostile plugin hunting for credentials', () => {
  let gw: SecurityGateway;
  let hostileUp: Upstream;
  let fixtureUp: Upstream;
  let a: Caller;
  let b: Caller;
  const allSecrets: string[] = Object.values(SECRETS);

  before(async () => {
    process.env['WORKBENCH_TEST_CANARY'] = SECRETS.env;
    // Both upstreams echo every request header back, in the body and in response headers.
    const echo = (req: { path: string; headers: Record<string, unknown> }) => ({
      json: { path: req.path, headers: req.headers },
      headers: {
        'x-echo-authorization': String(req.headers['authorization'] ?? ''),
        'set-cookie': `s=${String(req.headers['authorization'] ?? '')}`,
      },
    });
    hostileUp = await startUpstream(echo);
    fixtureUp = await startUpstream(echo);
    gw = await startSecurityGateway({
      upstreams: { 'https://api.hostile.test': hostileUp.origin, 'https://api.fixture.test': fixtureUp.origin },
    });
    const ua = await gw.createUser('alice@example.com', 'acme');
    const ub = await gw.createUser('bob@example.com', 'globex');
    a = { apiKey: ua.apiKey, userId: ua.user.id };
    b = { apiKey: ub.apiKey, userId: ub.user.id };
    await gw.connect('hostile-thief', ua.user, SECRETS.aThief);
    await gw.connect('fixture-http', ua.user, SECRETS.aHttp);
    await gw.connect('hostile-thief', ub.user, SECRETS.bThief);
    await gw.connect('fixture-http', ub.user, SECRETS.bHttp);
    await gw.connect('hostile-keyring', ua.user, undefined, {
      values: { username: SECRETS.aUser, password: SECRETS.aPassword, site: 'eu-site' },
    });
    allSecrets.push(
      ua.apiKey,
      ub.apiKey,
      fs.readFileSync(path.join(gw.dataDir, 'encryption.key'), 'utf8').trim(),
      Buffer.from(`${SECRETS.aUser}:${SECRETS.aPassword}`).toString('base64'),
    );
  });

  after(async () => {
    delete process.env['WORKBENCH_TEST_CANARY'];
    await gw?.close();
    await hostileUp?.close();
    await fixtureUp?.close();
  });

  /** The legitimate plugins answer correctly for this caller, with this caller's own credential. */
  async function legitimateStillWorks(caller: Caller, token: string): Promise<void> {
    const [echo] = await gw.batch(
      'fixture-echo',
      [{ tool: 'echo_args', args: { text: 'still here', times: 2 } }],
      caller.apiKey,
    );
    const [http] = await gw.batch(
      'fixture-http',
      [{ tool: 'http_get', args: { path: `/legit/${caller.userId}` } }],
      caller.apiKey,
    );
    assert.deepEqual(echo, { result: { text: 'still herestill here', args: { text: 'still here', times: 2 } } });
    assert.equal(http.result?.status, 200, JSON.stringify(http));
    assert.equal(http.result.body.path, `/legit/${caller.userId}`);
    const seen = fixtureUp.requests.filter((r) => r.path === `/legit/${caller.userId}`).at(-1);
    assert.equal(
      seen?.headers.authorization,
      `Bearer ${token}`,
      "the legitimate plugin still gets its own user's credential",
    );
  }

  it('finds no secret by walking ctx, its prototypes and globalThis', async () => {
    for (const transport of ['rest', 'mcp'] as const) {
      const [item] =
        transport === 'rest'
          ? await gw.batch('hostile-thief', [{ tool: 'thief_walk' }], a.apiKey)
          : await gw.mcpExecute([{ tool: 'thief_walk' }], a.apiKey);
      assert.ok(
        item.result?.count > 100,
        `${transport}: the walk ran and found the intrinsics (${JSON.stringify(item).slice(0, 200)})`,
      );
      assert.deepEqual(findSecrets([JSON.stringify(item)], allSecrets), []);
      assert.doesNotMatch(item.result.strings, /SECRET-|__wb_bridge|Bearer /);
    }
    await legitimateStillWorks(a, SECRETS.aHttp);
  });

  it('gets its own credential redacted when its upstream echoes it in the body and headers', async () => {
    const [item] = await gw.batch('hostile-thief', [{ tool: 'thief_echo', args: { path: '/echo-a' } }], a.apiKey);
    assert.equal(item.result?.status, 200, JSON.stringify(item));
    const seen = hostileUp.requests.find((r) => r.path === '/echo-a');
    assert.equal(
      seen?.headers.authorization,
      `Bearer ${SECRETS.aThief}`,
      "the bridge injected the caller's own credential upstream",
    );
    assert.deepEqual(findSecrets([JSON.stringify(item)], allSecrets), [], 'but the plugin never sees it');
    assert.match(JSON.stringify(item.result.body), /\[REDACTED\]/);
    const [mcpItem] = await gw.mcpExecute([{ tool: 'thief_echo', args: { path: '/echo-a-mcp' } }], a.apiKey);
    assert.equal(mcpItem.result?.status, 200);
    assert.deepEqual(findSecrets([JSON.stringify(mcpItem)], allSecrets), []);
  });

  it('keeps API-key fields out of ctx.config and redacts the Basic credential its upstream echoes', async () => {
    const [item] = await gw.batch(
      'hostile-keyring',
      [{ tool: 'keyring_echo', args: { path: '/keyring-a' } }],
      a.apiKey,
    );
    assert.equal(item.result?.status, 200, JSON.stringify(item));
    assert.deepEqual(item.result.config, { site: 'eu-site' }, 'only the non-secret field is config');
    const seen = hostileUp.requests.find((r) => r.path === '/keyring-a');
    assert.equal(
      seen?.headers.authorization,
      `Basic ${Buffer.from(`${SECRETS.aUser}:${SECRETS.aPassword}`).toString('base64')}`,
      'the bridge injected HTTP Basic',
    );
    assert.deepEqual(findSecrets([JSON.stringify(item)], allSecrets), []);
  });

  it("never carries another plugin's or another user's credential to a host it declares without injection", async () => {
    const [item] = await gw.batch(
      'hostile-thief',
      [{ tool: 'thief_other_host', args: { path: '/borrow-a' } }],
      a.apiKey,
    );
    assert.equal(item.result?.status, 200, JSON.stringify(item));
    const seen = fixtureUp.requests.find((r) => r.path === '/borrow-a');
    assert.ok(seen, 'the request reached the other API');
    assert.equal(
      seen.headers.authorization,
      undefined,
      "no credential is attached: not the plugin's own, not fixture-http's",
    );
    assert.deepEqual(findSecrets([JSON.stringify(seen.headers), JSON.stringify(item)], allSecrets), []);
  });

  it('drops its credential when its own upstream redirects to another declared host', async () => {
    hostileUp.setHandler((req): UpstreamReply =>
      req.path === '/to-fixture'
        ? { status: 307, headers: { location: 'https://api.fixture.test/after-redirect' } }
        : {
            json: { path: req.path, headers: req.headers },
            headers: { 'x-echo-authorization': String(req.headers['authorization'] ?? '') },
          },
    );
    const [item] = await gw.batch('hostile-thief', [{ tool: 'thief_echo', args: { path: '/to-fixture' } }], a.apiKey);
    assert.equal(item.result?.status, 200, JSON.stringify(item));
    assert.equal(
      hostileUp.requests.find((r) => r.path === '/to-fixture')?.headers.authorization,
      `Bearer ${SECRETS.aThief}`,
    );
    const after = fixtureUp.requests.find((r) => r.path === '/after-redirect');
    assert.ok(after, 'the redirect was followed to the other declared host');
    assert.equal(after.headers.authorization, undefined, 'the credential did not cross origins');
    assert.deepEqual(findSecrets([JSON.stringify(after.headers), JSON.stringify(item)], allSecrets), []);
  });

  it("keeps each user's credential to that user's calls, even when both users call at once", async () => {
    const paths = (who: string) =>
      Array.from({ length: 6 }, (_, i) => ({ tool: 'thief_echo', args: { path: `/mix-${who}-${i}` } }));
    const [ra, rb] = await Promise.all([
      gw.batch('hostile-thief', paths('a'), a.apiKey),
      gw.batch('hostile-thief', paths('b'), b.apiKey),
    ]);
    assert.ok([...ra, ...rb].every((r) => r.result?.status === 200));
    for (const r of hostileUp.requests.filter((x) => x.path.startsWith('/mix-'))) {
      const want = r.path.startsWith('/mix-a-') ? SECRETS.aThief : SECRETS.bThief;
      assert.equal(r.headers.authorization, `Bearer ${want}`, `${r.path} carried its own user's token`);
    }
    assert.deepEqual(findSecrets([JSON.stringify(ra), JSON.stringify(rb)], allSecrets), []);
    await legitimateStillWorks(b, SECRETS.bHttp);
  });

  it('finds no secret in bridge errors, their stacks or their constructor chains', async () => {
    hostileUp.setHandler((req) =>
      req.path === '/redirect-out'
        ? { status: 302, headers: { location: 'https://169.254.169.254/latest/meta-data/iam/security-credentials/' } }
        : { json: { path: req.path, headers: req.headers } },
    );
    const [item] = await gw.batch('hostile-thief', [{ tool: 'thief_errors' }], a.apiKey);
    const attempts = item.result as Array<{ url: string; ok?: boolean; error?: { string: string } }>;
    assert.equal(attempts.length, 6, JSON.stringify(item).slice(0, 500));
    for (const at of attempts) {
      assert.equal(at.ok, undefined, `${at.url} must fail`);
      assert.match(at.error?.string ?? '', /GW_ERR_BRIDGE_[A-Z_]+/, `${at.url} fails with a bridge code`);
    }
    assert.match(
      attempts[0]?.error?.string ?? '',
      /GW_ERR_BRIDGE_(HOST_NOT_ALLOWED|ADDRESS_BLOCKED)/,
      'a redirect to the metadata address is refused',
    );
    assert.match(
      attempts[5]?.error?.string ?? '',
      /GW_ERR_BRIDGE_BAD_REQUEST/,
      'plugin code may not set the credential header itself',
    );
    assert.equal(hostileUp.requests.filter((r) => r.path === '/override').length, 0);
    assert.deepEqual(findSecrets([JSON.stringify(item)], allSecrets), []);
  });

  it('cannot launder what it saw through ctx.log or an error message', async () => {
    hostileUp.setHandler((req) => ({
      json: { path: req.path, headers: req.headers },
      headers: { 'x-echo-authorization': String(req.headers['authorization']) },
    }));
    const [item] = await gw.batch('hostile-thief', [{ tool: 'thief_log' }], b.apiKey);
    assert.equal(item.code, 'GW_ERR_SANDBOX_HANDLER_THREW');
    assert.match(item.error, /^stolen: /);
    assert.match(item.error, /\[REDACTED\]/, 'the echoed credential was redacted before the plugin saw it');
    const pluginLines = gw.logs.filter((l) => l.includes('"source":"plugin"'));
    assert.ok(
      pluginLines.some((l) => l.includes('stolen')),
      "the plugin's log lines reached the log",
    );
    assert.deepEqual(findSecrets([JSON.stringify(item)], allSecrets), []);
  });

  it('cannot forge log lines or flood the log through ctx.log', async () => {
    const before = gw.logs.length;
    const [item] = await gw.batch('hostile-thief', [{ tool: 'thief_forge_log' }], a.apiKey);
    assert.deepEqual(item, { result: { logged: true } });
    const lines = gw.logs.slice(before);
    for (const line of lines)
      assert.doesNotThrow(() => JSON.parse(line), `every log line is one JSON object: ${line.slice(0, 200)}`);
    const parsed = lines.map((l) => JSON.parse(l) as { msg?: string; source?: string; userId?: string });
    assert.ok(
      !parsed.some((p) => p.msg === 'admin login ok' || p.userId === 'root'),
      'no forged line became a real one',
    );
    const fromPlugin = parsed.filter((p) => p.source === 'plugin');
    assert.ok(
      fromPlugin.length >= 3 && fromPlugin.length <= 100,
      `plugin log lines per call are capped (${fromPlugin.length})`,
    );
    assert.ok(
      lines.every((l) => l.length < 5000),
      'each plugin log line is bounded',
    );
  });

  it('keeps no module state, globals or patched built-ins across calls and users', async () => {
    const secretA = `SECRET-STATE-${tag}-a`;
    allSecrets.push(secretA);
    const remembered = await gw.batch(
      'hostile-state',
      [1, 2, 3].map(() => ({ tool: 'state_remember', args: { secret: secretA } })),
      a.apiKey,
    );
    assert.ok(
      remembered.every((r) => r.result?.calls === 1 && r.result.remembered === 1),
      `every call starts from a fresh module: ${JSON.stringify(remembered)}`,
    );
    const [recallB] = await gw.batch('hostile-state', [{ tool: 'state_recall' }], b.apiKey);
    assert.deepEqual(recallB.result, { calls: 1, memory: [], stash: null, proto: null, arr: null, json: '{"a":1}' });
    const [recallA] = await gw.mcpExecute([{ tool: 'state_recall' }], a.apiKey);
    assert.deepEqual(recallA.result.memory, []);
    // a legitimate plugin after the pollution attempt: its built-ins are untouched
    const [echo] = await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'clean' } }], b.apiKey);
    assert.deepEqual(echo, { result: { text: 'clean', args: { text: 'clean', times: 1 } } });
    assert.deepEqual(findSecrets([JSON.stringify(recallB), JSON.stringify(echo)], [secretA]), []);
  });

  it('leaves no secret in any response body, audit row or log line, and audits every execution', async () => {
    await legitimateStillWorks(a, SECRETS.aHttp);
    const audit = await gw.auditText();
    const rows = JSON.parse(audit) as Array<{
      tool: string;
      integration: string | null;
      success: number;
      error_code: string | null;
    }>;
    assert.ok(
      rows.some((r) => r.tool === 'thief_log' && r.success === 0 && r.error_code === 'GW_ERR_SANDBOX_HANDLER_THREW'),
    );
    assert.ok(
      rows.filter((r) => r.integration === 'hostile-thief').length >= 19,
      'one audit row per hostile execution',
    );
    const hits = findSecrets([...gw.bodies, audit, ...gw.logs], allSecrets);
    // the only place a user's own upstream credential may appear is the upstream request itself
    assert.deepEqual(hits, [], hits.join('\n'));
    assert.ok(gw.logs.length > 5, 'logs were captured');
  });
});
