/**
 * @module test/sdk/clone-url.unit.test
 * plainCloneUrl: a clone URL shown to an agent never carries a credential — the user part of an
 * https URL is dropped whole, an SSH URL keeps its `git` login but loses any password, and what is
 * not a clone URL is null.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { plainCloneUrl } from '../../sdk/clone-url.js';

describe('sdk plainCloneUrl', () => {
  test('https: as it is without a user part; a user name or user:secret pair is dropped', () => {
    assert.equal(plainCloneUrl('https://github.com/octo/hello.git'), 'https://github.com/octo/hello.git');
    assert.equal(plainCloneUrl('https://nick@bitbucket.org/acme/api.git'), 'https://bitbucket.org/acme/api.git');
    assert.equal(
      plainCloneUrl('https://oauth2:glpat-SECRET@gitlab.example.com:8443/g/p.git'),
      'https://gitlab.example.com:8443/g/p.git',
    );
    assert.equal(plainCloneUrl('http://x-token-auth:SECRET@host/r.git'), 'http://host/r.git');
    // a password holding "@": the host starts after the last one
    assert.equal(plainCloneUrl('https://user:p@ss@host/r.git'), 'https://host/r.git');
  });

  test('ssh: the git login is kept, a password never', () => {
    assert.equal(plainCloneUrl('git@github.com:octo/hello.git'), 'git@github.com:octo/hello.git');
    assert.equal(plainCloneUrl('ssh://git@gitlab.com:2222/g/p.git'), 'ssh://git@gitlab.com:2222/g/p.git');
    assert.equal(plainCloneUrl('ssh://git:SECRET@host/g/p.git'), 'ssh://git@host/g/p.git');
  });

  test('anything else is null', () => {
    for (const v of [undefined, null, 42, '', 'not a url', 'ftp://host/r.git', 'file:///tmp/r.git'])
      assert.equal(plainCloneUrl(v), null, String(v));
  });
});
