/**
 * @module test/helpers/tool-calls
 * The two assertions every plugin test makes about one execution through a started gateway: it
 * succeeded (its result), or it failed with a message matching a pattern that carries none of the
 * connection's secrets.
 */
import assert from 'node:assert/strict';
import type { TestGateway } from './gateway.js';

export interface ToolCalls {
  /** runs the tool and returns its result, failing the test when the execution failed */
  // Tests read arbitrary JSON results.
  ok(tool: string, args: Record<string, unknown>, apiKey?: string): Promise<any>;
  /** runs the tool, asserts it failed with `pattern` and no secret in the message, and returns the message */
  fails(tool: string, args: Record<string, unknown>, pattern: RegExp, apiKey?: string): Promise<string>;
}

/** `gw` is read at each call (tests start the gateway in `before`); `secrets` must never appear in an error. */
export function toolCalls(gw: () => TestGateway, secrets: readonly string[]): ToolCalls {
  return {
    async ok(tool, args, apiKey) {
      const item = (await gw().execute(tool, args, apiKey)) as Record<string, unknown>;
      assert.ok('result' in item, `${tool} failed: ${JSON.stringify(item)}`);
      return item['result'];
    },
    async fails(tool, args, pattern, apiKey) {
      const item = (await gw().execute(tool, args, apiKey)) as Record<string, unknown>;
      assert.ok(!('result' in item), `${tool} should fail: ${JSON.stringify(item)}`);
      const text = `${String(item['error'])} ${String(item['message'] ?? '')}`;
      assert.match(text, pattern);
      const whole = JSON.stringify(item);
      for (const secret of secrets)
        assert.ok(!whole.includes(secret), 'a secret of the connection never appears in a failed item');
      return text;
    },
  };
}
