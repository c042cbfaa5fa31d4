/**
 * @module host/meta-tools/types
 * A meta-tool is one of the fixed MCP tools the gateway itself serves (search_tools,
 * execute_tools, connect, …). Each area registers its own; the MCP transport lists them in a
 * stable order and calls them with the authenticated caller.
 */
import type * as z from 'zod';
import type { User } from '../storage/users.js';

export type TransportName = 'mcp' | 'rest' | 'stdio';

export interface MetaToolContext {
  user: User;
  transport: TransportName;
  /** aborted when the client cancels or disconnects (for waits that nobody could see the end of) */
  signal: AbortSignal;
  /**
   * aborted only when the client cancels the request (MCP `notifications/cancelled`); a dropped
   * connection is not a cancellation, so work with effects (execute_tools) stops only on this one
   */
  cancelled: AbortSignal;
  /** sends an MCP progress notification when the client asked for one; a no-op otherwise */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** a request id for logs and audit */
  requestId: string;
  /** whether the API key of the request is still valid (HTTP; stdio has no key) */
  keyValid?: (() => Promise<boolean>) | undefined;
  /** bytes of results the whole HTTP request may still return, shared by its execute_tools calls */
  resultBudget?: { remaining: number } | undefined;
}

/** What a meta-tool returns: JSON for the text block, plus optional image blocks. */
export interface MetaToolResult {
  /** stringified into the text block (ignored when `text` is given) */
  json: unknown;
  /** the text block verbatim, for tools that build (and cap) their own JSON text */
  text?: string;
  images?: { data: string; mimeType: string }[];
  /** true when the call failed as a whole (sets MCP isError) */
  isError?: boolean;
}

export interface MetaTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  /** order in tools/list (lower first) */
  order: number;
  title: string;
  description: string;
  inputSchema: S;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  handler(ctx: MetaToolContext, args: z.infer<S>): Promise<MetaToolResult>;
}
