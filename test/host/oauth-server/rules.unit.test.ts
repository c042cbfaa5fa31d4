/**
 * @module test/host/oauth-server/rules.unit.test
 * The authorization server's rules that need no server: which redirect URIs a client may register,
 * which client_id URLs are metadata documents, how long a document is kept, PKCE S256 against the
 * RFC 7636 example, the scopes, the address budget's window, and where the metadata says things are.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressBudget, WINDOW_MS } from '../../../host/oauth-server/address-budget.js';
import {
  cacheSecondsOf,
  clientIdUrlProblem,
  DEFAULT_CACHE_SEC,
  MAX_CACHE_SEC,
  MIN_CACHE_SEC,
} from '../../../host/oauth-server/client-document.js';
import { checkClientMetadata, parseScope, redirectUriProblem } from '../../../host/oauth-server/client-metadata.js';
import { canonicalResource, endpointsOf } from '../../../host/oauth-server/metadata.js';
import { isOAuthRefusal } from '../../../host/oauth-server/oauth-error.js';
import { verifierMatches } from '../../../host/oauth-server/secrets.js';

describe('redirect URIs', () => {
  it('takes https anywhere and http on loopback only, never with a fragment or user info', () => {
    for (const ok of [
      'https://app.example/cb',
      'https://app.example/cb?x=1',
      'http://127.0.0.1:1234/callback',
      'http://127.9.9.9/cb',
      'http://localhost:3000/oauth/callback',
      'http://[::1]:8080/cb',
    ])
      assert.equal(redirectUriProblem(ok), undefined, ok);
    for (const bad of [
      'http://app.example/cb',
      'http://127.0.0.1.nip.io/cb',
      'https://app.example/cb#x',
      'https://u:p@app.example/cb',
      'javascript:alert(1)',
      'data:text/html,hi',
      'cursor://anysphere/cb',
      '/relative',
      'https://app.example/a b',
      'https://app.example/\\evil',
      `https://app.example/${'a'.repeat(1000)}`,
      '',
      42,
    ])
      assert.ok(redirectUriProblem(bad), String(bad));
  });

  it('keeps each redirect URI exactly as written (compared by string equality at /authorize)', () => {
    const m = checkClientMetadata({ redirect_uris: ['https://APP.example:443/cb'] });
    assert.deepEqual(m.redirect_uris, ['https://APP.example:443/cb']);
    assert.equal(m.token_endpoint_auth_method, 'none');
    try {
      checkClientMetadata({
        redirect_uris: ['https://a.example/cb'],
        token_endpoint_auth_method: 'client_secret_post',
      });
      assert.fail('refused');
    } catch (err) {
      assert.ok(isOAuthRefusal(err) && err.error === 'invalid_client_metadata');
    }
  });
});

describe('client ID metadata document URLs', () => {
  it('are https with a path, without user info, fragment or dot segments', () => {
    assert.equal(clientIdUrlProblem('https://app.example/oauth/client.json'), undefined);
    assert.equal(clientIdUrlProblem('https://app.example:8443/client?v=1'), undefined);
    for (const bad of [
      'https://app.example',
      'https://app.example/',
      'https://app.example/a/./b',
      'https://app.example/a/../b',
      'https://app.example/a/%2E%2E/b',
      'https://app.example/a/.%2e/b',
      'https://app.example/c#f',
      'https://u@app.example/c',
      'https://app.example/a b',
    ])
      assert.ok(clientIdUrlProblem(bad), bad);
  });

  it('are kept as long as their Cache-Control says, within bounds', () => {
    assert.equal(cacheSecondsOf(null), DEFAULT_CACHE_SEC);
    assert.equal(cacheSecondsOf('public, max-age=600'), 600);
    assert.equal(cacheSecondsOf('max-age=5'), MIN_CACHE_SEC);
    assert.equal(cacheSecondsOf('max-age=99999999'), MAX_CACHE_SEC);
    assert.equal(cacheSecondsOf('no-store'), MIN_CACHE_SEC);
    assert.equal(cacheSecondsOf('max-age=abc'), DEFAULT_CACHE_SEC);
  });
});

describe('PKCE and scopes', () => {
  it('checks S256 against the RFC 7636 appendix B example, and nothing else', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    assert.equal(verifierMatches(verifier, challenge), true);
    assert.equal(verifierMatches(challenge, challenge), false, 'plain');
    assert.equal(verifierMatches(`${verifier}x`, challenge), false);
    assert.equal(verifierMatches('short', challenge), false, 'a verifier has 43 to 128 characters');
  });

  it('knows the mcp scope (always granted) and offline_access', () => {
    assert.deepEqual(parseScope(undefined), ['mcp']);
    assert.deepEqual(parseScope('offline_access'), ['mcp', 'offline_access']);
    assert.equal(parseScope('mcp admin'), undefined);
  });
});

describe('the address budget', () => {
  it('counts per address in a fixed window and says when it ends', () => {
    let now = 1_000_000;
    const budget = new AddressBudget(2, () => now);
    assert.equal(budget.take('a'), undefined);
    assert.equal(budget.take('a'), undefined);
    assert.equal(budget.take('a'), WINDOW_MS / 1000);
    assert.equal(budget.take('b'), undefined, 'another address has its own');
    now += WINDOW_MS - 10_000;
    assert.equal(budget.take('a'), 10);
    now += 10_000;
    assert.equal(budget.take('a'), undefined, 'a new window');
  });
});

describe('the metadata', () => {
  it('derives every address from the public URL; the resource is /mcp, one trailing slash tolerated', () => {
    const e = endpointsOf('https://wb.example.com');
    assert.equal(e.resource, 'https://wb.example.com/mcp');
    assert.equal(e.resourceMetadataUrl, 'https://wb.example.com/.well-known/oauth-protected-resource/mcp');
    assert.deepEqual(e.serverMetadataPaths, ['/.well-known/oauth-authorization-server']);
    assert.equal(canonicalResource(e, 'https://wb.example.com/mcp/'), e.resource);
    assert.equal(canonicalResource(e, 'https://wb.example.com/'), undefined);
    assert.equal(canonicalResource(e, 'https://evil.example/mcp'), undefined);
    const under = endpointsOf('https://corp.example/workbench');
    assert.equal(under.resource, 'https://corp.example/workbench/mcp');
    assert.equal(under.resourceMetadataUrl, 'https://corp.example/.well-known/oauth-protected-resource/workbench/mcp');
    assert.ok(under.serverMetadataPaths.includes('/.well-known/oauth-authorization-server/workbench'));
  });
});
