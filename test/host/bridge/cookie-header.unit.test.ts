/**
 * @module test/host/bridge/cookie-header.unit.test
 * The Cookie header a cookie connection sends with one request, as a browser builds it (RFC 6265
 * §5.4): domain match (a domain cookie also for the hosts inside it, a host-only cookie for its
 * host alone), path match at "/" boundaries, secure cookies only over https, expired ones never,
 * longer paths first.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cookieHeaderFor, domainMatches, pathMatches, type StoredCookie } from '../../../host/bridge/cookie-header.js';

const NOW = Date.UTC(2030, 0, 1);
const cookie = (over: Partial<StoredCookie>): StoredCookie => ({
  name: 'sid',
  value: 'v',
  domain: 'example.com',
  path: '/',
  expires: -1,
  httpOnly: true,
  secure: false,
  sameSite: 'Lax',
  ...over,
});
const header = (cookies: StoredCookie[], url: string): string | undefined =>
  cookieHeaderFor(cookies, new URL(url), NOW);

describe('the Cookie header of a cookie connection', () => {
  it('domain match: a domain cookie covers its domain and the hosts inside it; a host-only cookie its host alone', () => {
    assert.ok(domainMatches('example.com', { domain: '.example.com' }));
    assert.ok(domainMatches('a.b.example.com', { domain: '.example.com' }));
    assert.ok(domainMatches('example.com', { domain: 'example.com' }));
    assert.ok(!domainMatches('api.example.com', { domain: 'example.com' }), 'host-only');
    assert.ok(!domainMatches('badexample.com', { domain: '.example.com' }), 'a suffix is not a domain');
    assert.ok(!domainMatches('example.com', { domain: '.api.example.com' }), 'never the parent');
  });

  it('path match: the same path, or a prefix ending at a "/"', () => {
    assert.ok(pathMatches('/', '/'));
    assert.ok(pathMatches('/docs/a', '/docs'));
    assert.ok(pathMatches('/docs/a', '/docs/'));
    assert.ok(pathMatches('/docs', '/docs'));
    assert.ok(!pathMatches('/docsearch', '/docs'), 'not in the middle of a segment');
    assert.ok(!pathMatches('/', '/docs'));
  });

  it('sends the cookies that go with the URL, longer paths first, and nothing when none does', () => {
    const cookies = [
      cookie({ name: 'root', value: '1', domain: '.example.com' }),
      cookie({ name: 'deep', value: '2', domain: '.example.com', path: '/api/v1' }),
      cookie({ name: 'api', value: '3', domain: '.example.com', path: '/api' }),
      cookie({ name: 'host', value: '4', domain: 'example.com' }),
      cookie({ name: 'other', value: '5', domain: '.other.net' }),
    ];
    assert.equal(header(cookies, 'https://api.example.com/api/v1/x?q=1'), 'deep=2; api=3; root=1');
    assert.equal(header(cookies, 'https://example.com/'), 'root=1; host=4');
    assert.equal(header(cookies, 'https://example.com/apiary'), 'root=1; host=4');
    assert.equal(header(cookies, 'https://EXAMPLE.com./'), 'root=1; host=4', 'the host as the policy reads it');
    assert.equal(header(cookies, 'https://unrelated.org/'), undefined);
  });

  it('a secure cookie only over https; an expired one never; a session cookie (-1) always', () => {
    const cookies = [
      cookie({ name: 'plain', value: 'p' }),
      cookie({ name: 'sec', value: 's', secure: true }),
      cookie({ name: 'old', value: 'o', expires: NOW / 1000 - 1 }),
      cookie({ name: 'edge', value: 'e', expires: NOW / 1000 }),
      cookie({ name: 'new', value: 'n', expires: NOW / 1000 + 60 }),
    ];
    assert.equal(header(cookies, 'https://example.com/'), 'plain=p; sec=s; new=n');
    assert.equal(header(cookies, 'http://example.com/'), 'plain=p; new=n');
  });
});
