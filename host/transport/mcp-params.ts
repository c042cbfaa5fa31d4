/**
 * @module host/transport/mcp-params
 * Requests whose params do not fit their method are answered -32602 Invalid params, naming the
 * field. The SDK parses a request's params inside its dispatcher and answers any failure as -32603
 * Internal error with the whole zod dump as its message; checking the same SDK schema first, between
 * the transport and the dispatcher, means the dispatcher only ever sees requests its parse accepts.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  SetLevelRequestSchema,
  isJSONRPCRequest,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod';
import { formatZodIssues } from '../engine/validate-args.js';
import { fail } from '../../contracts/errors.js';

/**
 * The SDK schema of every request method the server answers: the ones the SDK registers itself
 * (initialize, ping) and the ones mcp-server.ts registers, with the very schema each is registered
 * with. A test checks this list against the methods the server has handlers for.
 */
export const REQUEST_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['logging/setLevel', SetLevelRequestSchema],
]);

/** The -32602 answer to a request whose params its method's schema rejects; undefined otherwise. */
export function invalidParamsAnswer(message: JSONRPCMessage): JSONRPCErrorResponse | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const parsed = REQUEST_SCHEMAS.get(message.method)?.safeParse(message);
  if (!parsed || parsed.success) return undefined;
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid params for ${message.method}: ${formatZodIssues(parsed.error)}`,
    },
  };
}

/**
 * Puts the params check in front of the dispatcher a connected server installed as the transport's
 * `onmessage`. Call it right after `connect`: the transports used here deliver nothing before then
 * (HTTP: handleRequest runs after connect; stdio: input arrives on a later event-loop turn).
 */
export function refuseInvalidParams(transport: Transport): void {
  const dispatch = transport.onmessage;
  if (!dispatch)
    throw fail('GW_ERR_INTERNAL_INVARIANT', {
      message: 'refuseInvalidParams: the transport has no dispatcher; connect the server first',
    });
  transport.onmessage = (message, extra) => {
    const answer = invalidParamsAnswer(message);
    if (!answer) return dispatch(message, extra);
    transport
      .send(answer)
      .catch((err: unknown) =>
        transport.onerror?.(err instanceof Error ? err : fail('GW_ERR_ENGINE_INTERNAL', { message: String(err) })),
      );
  };
}
