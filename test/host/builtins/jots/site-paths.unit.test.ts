/**
 * @module test/host/builtins/jots/site-paths.unit.test
 * A jot's file paths (host/builtins/jots/site-paths.ts): plain relative paths are kept (with "./"
 * segments dropped), everything else is refused with GW_ERR_JOTS_INVALID_PATH naming the path; a
 * request's URL path finds a stored one (a folder's address its index.html) or nothing; the
 * Content-Type comes from the extension alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isWorkbenchError } from '../../../../contracts/errors.js';
import { contentTypeOf, encodePath, normalisePath, requestedFile } from '../../../../host/builtins/jots/site-paths.js';

describe('jot file paths', () => {
  it('keeps plain relative paths, dropping "./" segments', () => {
    const kept: [string, string][] = [
      ['index.html', 'index.html'],
      ['./index.html', 'index.html'],
      ['css/./site.css', 'css/site.css'],
      ['a b/ü €.txt', 'a b/ü €.txt'],
      ['.well-known/x', '.well-known/x'],
      [`${'d/'.repeat(15)}f`, `${'d/'.repeat(15)}f`],
    ];
    for (const [raw, want] of kept) assert.equal(normalisePath(raw), want);
  });

  it('refuses the rest with GW_ERR_JOTS_INVALID_PATH and the path in its details', () => {
    const bad = [
      '',
      '/a',
      '..',
      'a/..',
      '../a',
      'a\\b',
      'a\u0000',
      'a\u001f',
      'a\u007f',
      'a\u0085',
      'a//b',
      'a/',
      '.',
      './',
      'a?b',
      'a#b',
      'x'.repeat(513),
      `${'d/'.repeat(16)}f`,
      `${'n'.repeat(256)}`,
    ];
    for (const raw of bad)
      assert.throws(
        () => normalisePath(raw),
        (err: unknown) =>
          isWorkbenchError(err) &&
          err.code === 'GW_ERR_JOTS_INVALID_PATH' &&
          err.details?.['path'] === raw.slice(0, 512),
        JSON.stringify(raw),
      );
  });

  it("finds a request's file, a folder's index.html, or nothing", () => {
    assert.equal(requestedFile(''), 'index.html');
    assert.equal(requestedFile('docs/'), 'docs/index.html');
    assert.equal(requestedFile('img/a%20b.png'), 'img/a b.png');
    assert.equal(requestedFile('%E2%82%AC.txt'), '€.txt');
    for (const bad of ['%E2%82', '..%2Fx', '%2e%2e/x', 'a%5Cb', 'a%00b', 'a//b'])
      assert.equal(requestedFile(bad), undefined, bad);
    assert.equal(encodePath('a b/€?.txt'), 'a%20b/%E2%82%AC%3F.txt');
  });

  it('chooses the Content-Type from the extension, and octet-stream for anything else', () => {
    const types: [string, string][] = [
      ['index.html', 'text/html; charset=utf-8'],
      ['A.HTM', 'text/html; charset=utf-8'],
      ['s.css', 'text/css; charset=utf-8'],
      ['m.mjs', 'text/javascript; charset=utf-8'],
      ['d.json', 'application/json; charset=utf-8'],
      ['i.svg', 'image/svg+xml'],
      ['p.PNG', 'image/png'],
      ['f.woff2', 'font/woff2'],
      ['noext', 'application/octet-stream'],
      ['.html', 'application/octet-stream'],
      ['x.exe', 'application/octet-stream'],
      ['dir.html/x', 'application/octet-stream'],
    ];
    for (const [p, t] of types) assert.equal(contentTypeOf(p), t, p);
  });
});
