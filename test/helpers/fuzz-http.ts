/**
 * @module test/helpers/fuzz-http
 * What every fuzzed HTTP answer must be: a status below 500 (502 only where the REST contract
 * documents it for a handler's own failure), within a deadline, and a JSON body carrying an error
 * or a result (plain JSON, or the JSON-RPC messages of an SSE stream).
 */
import assert from 'node:assert/strict';

// Fuzzed answers are arbitrary JSON.
export type Json = any;

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** POSTs raw text with a hard deadline: a hang fails the property instead of the whole run. */
export async function postRaw(
  url: string,
  body: string,
  headers: Record<string, string>,
  deadlineMs = 15_000,
): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(deadlineMs) });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The JSON-RPC messages in an MCP answer (application/json or text/event-stream). */
export function mcpMessages(a: Answer): Json[] {
  if (a.contentType.includes('text/event-stream')) {
    return a.text
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)));
  }
  const v = JSON.parse(a.text);
  return Array.isArray(v) ? v : [v];
}

/** Asserts an MCP answer is clear: < 500, and JSON-RPC messages each with a result, an error or a method. */
export function assertClearMcpAnswer(a: Answer, input: string): Json[] {
  const where = `input ${input.slice(0, 300)} → ${a.status} ${a.text.slice(0, 300)}`;
  assert.ok(a.status < 500, where);
  if (a.status === 202) {
    assert.equal(a.text, '', where);
    return [];
  }
  let messages: Json[] = [];
  assert.doesNotThrow(() => (messages = mcpMessages(a)), where);
  assert.ok(messages.length > 0, where);
  for (const m of messages) {
    assert.ok(m && typeof m === 'object', where);
    assert.ok('result' in m || 'error' in m || 'method' in m, where);
    if ('error' in m) assert.ok(typeof m.error.code === 'number' && typeof m.error.message === 'string', where);
  }
  assert.ok(
    messages.some((m) => 'result' in m || 'error' in m),
    where,
  );
  return messages;
}

/** Asserts a REST answer is clear: < 500 (or a documented 502), JSON, with an error+code or a result. */
export function assertClearRestAnswer(a: Answer, input: string): Json {
  const where = `input ${input.slice(0, 300)} → ${a.status} ${a.text.slice(0, 300)}`;
  let body: Json;
  assert.doesNotThrow(() => (body = JSON.parse(a.text)), where);
  if (a.status === 502)
    assert.match(String(body.code), /^GW_ERR_SANDBOX_HANDLER_THREW$/, `502 only for a handler's own failure: ${where}`);
  else assert.ok(a.status < 500, where);
  if (a.status >= 400) assert.ok(typeof body.error === 'string' && typeof body.code === 'string', where);
  else
    assert.ok(
      'result' in body || Array.isArray(body.results) || Array.isArray(body.tools) || Array.isArray(body.integrations),
      where,
    );
  return body;
}
