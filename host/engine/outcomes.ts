/**
 * @module host/engine/outcomes
 * The shapes one execution can return. The seed's four outcomes keep their exact `error` strings
 * (`Tool not found`, `NOT_CONNECTED`, `Invalid arguments for <tool>: …`, the handler's own message)
 * and every error item also carries a stable `code` from the catalogue, so clients can branch on
 * it without parsing prose.
 */
import type { GatewayErrorCode } from '../errors.js';
import type { BridgeErrorCode, SandboxErrorCode } from '../../contracts/protocol.js';

export interface ExecutionRequest {
  tool: string;
  args?: unknown;
}

export interface ResultItem {
  result: unknown;
}

export interface ErrorItem {
  error: string;
  code: GatewayErrorCode | SandboxErrorCode | BridgeErrorCode;
  integration?: string;
  tool?: string;
  message?: string;
  rule?: string;
  reason?: string;
  retryAfterSec?: number;
}

export type ExecutionItem = ResultItem | ErrorItem;

export const isErrorItem = (item: ExecutionItem): item is ErrorItem => 'error' in item;

export function toolNotFound(tool: string): ErrorItem {
  return {
    error: 'Tool not found',
    code: 'GW_ERR_ENGINE_TOOL_NOT_FOUND',
    tool,
    message: `No tool named "${tool}". Use search_tools to find one.`,
  };
}

/**
 * `notConnectable`: why connect cannot work on this server (no OAuth client configured); the
 * message then sends the agent to the operator instead of to a connect that must fail.
 */
export function notConnected(integration: string, reason?: string, notConnectable?: string): ErrorItem {
  const item: ErrorItem = {
    error: 'NOT_CONNECTED',
    code: 'GW_ERR_ENGINE_NOT_CONNECTED',
    integration,
    message:
      notConnectable === undefined
        ? `${integration} not connected. Use connect('${integration}') to connect.`
        : `${integration} not connected, and it cannot be connected on this server yet (${notConnectable}): ` +
          `connect('${integration}') would fail. Tell the user an operator must configure it first.`,
  };
  if (reason) item.reason = reason;
  return item;
}

export function forbidden(integration: string, tool: string, rule: string, reason: string): ErrorItem {
  return {
    error: 'FORBIDDEN',
    code: 'GW_ERR_POLICY_FORBIDDEN',
    integration,
    tool,
    rule,
    message: `Policy forbids ${tool}: ${reason} (rule ${rule}).`,
  };
}

/** An execution the client cancelled: not started, or stopped while its ctx.http requests ran. */
export function cancelled(integration: string | undefined, started: boolean): ErrorItem {
  return {
    error: started
      ? 'Cancelled by the client while running; its ctx.http requests were stopped'
      : 'Cancelled by the client before it started',
    code: 'GW_ERR_ENGINE_CANCELLED',
    ...(integration !== undefined ? { integration } : {}),
  };
}

export function invalidArguments(tool: string, detail: string): ErrorItem {
  return { error: `Invalid arguments for ${tool}: ${detail}`, code: 'GW_ERR_VALIDATION_INVALID_ARGS' };
}
