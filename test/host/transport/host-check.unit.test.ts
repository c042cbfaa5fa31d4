/**
 * @module test/host/transport/host-check.unit.test
 * DNS-rebinding protection on a loopback bind: only loopback hosts (and the public URL's host)
 * may appear in Host and Origin. A DNS name that starts with "127." is a name like any other.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHostChecker, isLoopbackBind } from '../../../host/transport/host-check.js';

describe('the Host / Origin check of a loopback bind', () => {
  const check = createHostChecker('https://gw.example.test');

  it('lets loopback literals, localhost and the public host through', () => {
    for (const host of ['127.0.0.1:3000', '127.1.2.3:3000', 'localhost:3000', '[::1]:3000', 'gw.example.test'])
      assert.equal(check(host, undefined), undefined, host);
    assert.equal(check('127.0.0.1:3000', 'http://127.0.0.1:3000'), undefined);
  });

  it('refuses a DNS name that merely starts with "127." in Host or Origin', () => {
    assert.match(check('127.0.0.1.evil.example:3000', undefined) ?? '', /Host header/);
    assert.match(check('127.0.0.1:3000', 'http://127.0.0.1.evil.example:3000') ?? '', /Origin/);
    assert.match(check('127.evil.example', undefined) ?? '', /Host header/);
  });

  it('refuses other hosts and the "null" origin', () => {
    assert.match(check('evil.example', undefined) ?? '', /Host header/);
    assert.match(check('127.0.0.1:3000', 'null') ?? '', /null/);
  });

  it('a loopback bind is a loopback literal, not a name', () => {
    assert.equal(isLoopbackBind('127.0.0.1'), true);
    assert.equal(isLoopbackBind('127.0.0.2'), true);
    assert.equal(isLoopbackBind('localhost'), true);
    assert.equal(isLoopbackBind('127.example.com'), false);
    assert.equal(isLoopbackBind('0.0.0.0'), false);
  });
});
