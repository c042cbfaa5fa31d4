/**
 * @module host/transport/mcp-envelope
 * The POST /mcp bodies the gateway answers itself, before the SDK sees them: JSON that is not a
 * JSON-RPC message, and batches the SDK would never answer. Both are -32600 Invalid Request (HTTP
 * 400). The SDK's transport calls any body it cannot read as JSON-RPC a Parse error (-32700), even
 * valid JSON; JSON-RPC keeps -32700 for text that is not JSON at all, which the body parser answers.
 * A message is judged by the SDK's own schema, so what passes here the SDK accepts too.
 */
import {
  JSONRPCErrorResponseSchema,
  JSONRPCMessageSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  RequestIdSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import type * as z from 'zod';
import { formatZodIssues } from '../engine/validate-args.js';

/** What to answer: the message of a -32600 error, and the id it answers (null when there is none). */
export interface InvalidRequest {
  message: string;
  id: string | number | null;
}

const isRequestId = (v: unknown): v is string | number => RequestIdSchema.safeParse(v).success;

/** The SDK schema of the kind of message this object claims to be, by its members. */
function schemaFor(msg: Record<string, unknown>): z.ZodType | undefined {
  if ('method' in msg) return 'id' in msg ? JSONRPCRequestSchema : JSONRPCNotificationSchema;
  if ('error' in msg) return JSONRPCErrorResponseSchema;
  if ('result' in msg) return JSONRPCResultResponseSchema;
  return undefined;
}

/** Why one entry is not a JSON-RPC message the SDK takes, naming the member; undefined when it is one. */
function problemOf(m: unknown): string | undefined {
  if (JSONRPCMessageSchema.safeParse(m).success) return undefined;
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'not a JSON object';
  const msg = m as Record<string, unknown>;
  if (msg['jsonrpc'] !== '2.0') return 'jsonrpc: must be "2.0"';
  if ('id' in msg && !isRequestId(msg['id']))
    return `id: must be a string or an integer${msg['id'] === null ? ', not null' : ''}`;
  const schema = schemaFor(msg);
  if (!schema) return 'not a request, a notification or a response (no method, result or error)';
  const parsed = schema.safeParse(msg);
  return parsed.success ? 'not a JSON-RPC message' : formatZodIssues(parsed.error);
}

/**
 * A batch the SDK would never answer: one that cancels its own request (the SDK drops the
 * cancelled request's response, and the HTTP request then waited forever).
 */
function cancelsOwnRequest(batch: readonly unknown[]): boolean {
  const ids = new Set(
    batch
      .filter((m) => typeof m === 'object' && m !== null && 'id' in m && 'method' in m)
      .map((m) => (m as { id: unknown }).id),
  );
  return batch.some((m) => {
    const msg = m as { method?: unknown; params?: { requestId?: unknown } } | null;
    return msg?.method === 'notifications/cancelled' && ids.has(msg.params?.requestId);
  });
}

/**
 * The -32600 answer to a JSON-RPC batch whose execute_tools calls hold more than `maxBatch`
 * executions together: one POST runs at most what one execute_tools may (as one REST request does),
 * instead of up to 100 times that. A batch with a single execute_tools is left to the tool's own
 * check (its answer names the field). Undefined when the batch may go on.
 */
export function tooManyExecutions(body: unknown, maxBatch: number): InvalidRequest | undefined {
  if (!Array.isArray(body)) return undefined;
  let calls = 0;
  let executions = 0;
  for (const m of body) {
    const msg = m as {
      method?: unknown;
      id?: unknown;
      params?: { name?: unknown; arguments?: { executions?: unknown } };
    } | null;
    if (msg?.method !== 'tools/call' || !('id' in msg) || msg.params?.name !== 'execute_tools') continue;
    calls++;
    const list = msg.params.arguments?.executions;
    executions += Array.isArray(list) ? list.length : 0;
  }
  if (calls < 2 || executions <= maxBatch) return undefined;
  return {
    message: `Invalid Request: the execute_tools calls of one batch may hold at most ${maxBatch} executions together (requests.maxBatch); these ${calls} hold ${executions}. Send them in separate requests.`,
    id: null,
  };
}

/**
 * The -32600 answer to a parsed body that may not go to the SDK; undefined when it may. A single
 * message answers with its own id when that id is valid. A batch is refused whole, with id null,
 * when it is empty, longer than the SDK's MAX_BATCH_SIZE (100), when one entry is not a message (the first such entry is named by its index,
 * from 0; none of the batch runs) or when it cancels its own request.
 */
export function invalidRequest(body: unknown): InvalidRequest | undefined {
  if (!Array.isArray(body)) {
    const problem = problemOf(body);
    if (problem === undefined) return undefined;
    const id = typeof body === 'object' && body !== null ? (body as { id?: unknown }).id : undefined;
    return { message: `Invalid Request: ${problem}`, id: isRequestId(id) ? id : null };
  }
  if (body.length === 0) return { message: 'Invalid Request: an empty batch', id: null };
  // the SDK's own bound, checked before any entry is read (or any request tracked)
  if (body.length > MAX_BATCH_SIZE)
    return {
      message: `Invalid Request: a batch may hold at most ${MAX_BATCH_SIZE} messages (${body.length} sent)`,
      id: null,
    };
  for (const [i, entry] of body.entries()) {
    const problem = problemOf(entry);
    if (problem !== undefined) return { message: `Invalid Request: batch entry ${i}: ${problem}`, id: null };
  }
  return cancelsOwnRequest(body)
    ? { message: 'Invalid Request: a batch may not cancel a request of the same batch', id: null }
    : undefined;
}
