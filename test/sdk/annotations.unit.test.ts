/**
 * @module test/sdk/annotations.unit.test
 * The SDK's annotation helpers give exactly the MCP hints they promise, and what they give is
 * valid as a manifest tool's annotations.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toolAnnotationsSchema } from '../../contracts/manifest.js';
import { changes, reads } from '../../sdk/annotations.js';

describe('sdk annotations', () => {
  test('reads: read-only, open world, idempotent only when said', () => {
    assert.deepEqual(reads('List things'), { title: 'List things', readOnlyHint: true, openWorldHint: true });
    assert.deepEqual(reads('Get thing', { idempotent: true }), {
      title: 'Get thing',
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
  });

  test('changes: not read-only, destructive and idempotent only when said', () => {
    assert.deepEqual(changes('Create thing'), {
      title: 'Create thing',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    });
    assert.deepEqual(changes('Delete thing', { destructive: true, idempotent: true }), {
      title: 'Delete thing',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
    assert.equal(changes('Rename thing', { idempotent: true }).destructiveHint, false);
  });

  test('both are valid manifest annotations', () => {
    for (const a of [reads('x'), changes('y'), changes('z', { destructive: true })])
      assert.ok(toolAnnotationsSchema.safeParse(a).success);
  });
});
