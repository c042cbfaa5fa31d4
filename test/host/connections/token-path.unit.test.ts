/**
 * @module test/host/connections/token-path.unit
 * A nested token path (Slack's authed_user) applies to the first exchange; a refresh answered at
 * the top level is still read.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { readTokenResponse } from '../../../host/connections/token-response.js';

const json = (body: unknown) =>
  new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

it('reads the token under tokenPath on the first exchange', async () => {
  const t = await readTokenResponse(
    json({ ok: true, authed_user: { access_token: 'xoxp-1', refresh_token: 'r1', expires_in: 60 } }),
    'token exchange',
    'authed_user',
  );
  assert.equal(t.accessToken, 'xoxp-1');
  assert.equal(t.refreshToken, 'r1');
});

it('falls back to the top level when a refresh answers there', async () => {
  const t = await readTokenResponse(
    json({ ok: true, access_token: 'xoxe-2', refresh_token: 'r2', expires_in: 60 }),
    'token refresh',
    'authed_user',
  );
  assert.equal(t.accessToken, 'xoxe-2');
  assert.equal(t.refreshToken, 'r2');
});

it('still refuses a response with no token anywhere', async () => {
  await assert.rejects(readTokenResponse(json({ ok: true }), 'token refresh', 'authed_user'), {
    code: 'GW_ERR_CONNECTION_PROVIDER',
    kind: 'bad_response',
    message: /no object at "authed_user"|no access_token/,
  });
});
