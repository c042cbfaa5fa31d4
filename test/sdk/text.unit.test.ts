/**
 * @module test/sdk/text.unit.test
 * clip and textWindow: long text cut at a length saying how much more there was, or read a window
 * at a time saying where to continue.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clip, textWindow } from '../../sdk/text.js';

describe('sdk text', () => {
  test('clip: as it is up to max, else cut saying how many more characters there were', () => {
    assert.equal(clip('abc', 3), 'abc');
    assert.equal(clip('', 0), '');
    assert.equal(clip('abcdef', 4), 'abcd… [truncated, 2 more characters]');
    assert.equal(clip('abc', 0), '… [truncated, 3 more characters]');
  });

  test('textWindow: the window, the total and where the next starts', () => {
    assert.deepEqual(textWindow('abcdefgh', 0, 3), { total_chars: 8, offset: 0, content: 'abc', next_offset: 3 });
    assert.deepEqual(textWindow('abcdefgh', 3, 3), { total_chars: 8, offset: 3, content: 'def', next_offset: 6 });
    assert.deepEqual(textWindow('abcdefgh', 6, 3), { total_chars: 8, offset: 6, content: 'gh', next_offset: null });
    assert.deepEqual(textWindow('abcdefgh', 5, 3), { total_chars: 8, offset: 5, content: 'fgh', next_offset: null });
  });

  test('textWindow: an offset past the end is the end', () => {
    assert.deepEqual(textWindow('abc', 10, 5), { total_chars: 3, offset: 3, content: '', next_offset: null });
    assert.deepEqual(textWindow('', 0, 5), { total_chars: 0, offset: 0, content: '', next_offset: null });
  });
});
