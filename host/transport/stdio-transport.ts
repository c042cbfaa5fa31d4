/**
 * @module host/transport/stdio-transport
 * MCP over stdio: one JSON-RPC message per line on stdin, answers on stdout. The SDK's own stdio
 * server transport, on a line longer than its 10 MB buffer, closes the whole transport: the
 * server then aborts every request in flight (a running execute_tools batch reads that as a
 * cancellation) and `workbench stdio` exits. A line it cannot read (not JSON, not JSON-RPC) is
 * dropped without an answer, so the client waits for it until its own timeout.
 *
 * This transport keeps serving instead, and answers as the HTTP endpoint does:
 *   - a line over `maxLineBytes` (the policy's `requests.bodyLimitBytes`, as for an HTTP body) is
 *     skipped up to its newline without being held in memory, and answered `-32600` "Request too
 *     large", with the request's id when the line's opening names one at the top level (clients
 *     write `jsonrpc`, `id`, `method` before `params`), else with id null;
 *   - a line that is not JSON is answered `-32700` (id null), JSON that is not a JSON-RPC message
 *     `-32600` with its id when valid (the same checks as POST /mcp), an array `-32600` (MCP has no
 *     batches over stdio since 2025-06-18, and the SDK's transport took none).
 * Each is also reported through `onerror` (logged on stderr by `workbench stdio`).
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { invalidRequest } from './mcp-envelope.js';
import { fail } from '../../contracts/errors.js';

/** How much of an over-long line is kept to find its id. */
const ID_PREFIX_BYTES = 1024;

/**
 * The id of a request whose line begins with `prefix`, when it appears among the top-level members
 * before any nested object, array or `params`; undefined otherwise (then the answer's id is null).
 */
export function leadingId(prefix: string): RequestId | undefined {
  const m =
    /^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.)*"\s*,)*\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(
      prefix,
    );
  if (!m?.[1]) return undefined;
  try {
    const id = JSON.parse(m[1]) as unknown;
    return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined;
  } catch {
    return undefined;
  }
}

export interface StdioTransportOptions {
  /** longest line read, in bytes (without its newline) */
  maxLineBytes: number;
}

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #in: Readable;
  readonly #out: Writable;
  readonly #max: number;
  /** the pieces of the line being read, and their length */
  #pieces: Buffer[] = [];
  #length = 0;
  /** set while skipping an over-long line: its opening, to find its id */
  #skipping: Buffer | undefined;
  #started = false;
  #closed = false;

  constructor(stdin: Readable, stdout: Writable, options: StdioTransportOptions) {
    this.#in = stdin;
    this.#out = stdout;
    this.#max = options.maxLineBytes;
  }

  readonly #onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (;;) {
      const nl = data.indexOf(0x0a);
      const piece = nl === -1 ? data : data.subarray(0, nl);
      this.#take(piece);
      if (nl === -1) return;
      this.#endLine();
      data = data.subarray(nl + 1);
    }
  };

  readonly #onError = (err: Error): void => this.onerror?.(err);

  async start(): Promise<void> {
    if (this.#started) throw fail('GW_ERR_INTERNAL_INVARIANT', { message: 'StdioLineTransport already started' });
    this.#started = true;
    this.#in.on('data', this.#onData);
    this.#in.on('error', this.#onError);
  }

  /** Adds part of the current line, or starts skipping it once it is too long. */
  #take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.#skipping) return;
    if (this.#length + piece.length > this.#max) {
      this.#skipping = Buffer.concat([...this.#pieces, piece]).subarray(0, ID_PREFIX_BYTES);
      this.#pieces = [];
      this.#length = 0;
      return;
    }
    this.#pieces.push(piece);
    this.#length += piece.length;
  }

  #endLine(): void {
    if (this.#skipping) {
      const id = leadingId(this.#skipping.toString('utf8'));
      this.#skipping = undefined;
      const message = `Request too large: a line may hold at most ${this.#max} bytes (requests.bodyLimitBytes)`;
      this.onerror?.(fail('GW_ERR_TRANSPORT_BODY_TOO_LARGE', { message: message }));
      this.#answerError(id ?? null, -32600, message);
      return;
    }
    const line = (this.#pieces.length === 1 ? (this.#pieces[0] as Buffer) : Buffer.concat(this.#pieces))
      .toString('utf8')
      .replace(/\r$/, '');
    this.#pieces = [];
    this.#length = 0;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.onerror?.(fail('GW_ERR_TRANSPORT_BAD_BODY', { message: 'Parse error: a line on stdin is not JSON' }));
      return this.#answerError(null, -32700, 'Parse error: Invalid JSON');
    }
    if (Array.isArray(value)) {
      this.onerror?.(fail('GW_ERR_TRANSPORT_BAD_BODY', { message: 'Invalid Request: a JSON-RPC batch on stdin' }));
      return this.#answerError(
        null,
        -32600,
        'Invalid Request: batches are not accepted over stdio; send one message per line',
      );
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (message.success) return this.onmessage?.(message.data);
    // not a message the SDK takes: the same -32600 answer as POST /mcp gives, naming the member
    const invalid = invalidRequest(value) ?? { message: 'Invalid Request: not a JSON-RPC message', id: null };
    this.onerror?.(fail('GW_ERR_TRANSPORT_BAD_BODY', { message: invalid.message }));
    this.#answerError(invalid.id, -32600, invalid.message);
  }

  #answerError(id: RequestId | null, code: number, message: string): void {
    // JSON-RPC answers a request it could not read with id null
    void this.#write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  #write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closed || this.#out.writableEnded) return resolve();
      if (this.#out.write(JSON.stringify(message) + '\n')) resolve();
      else this.#out.once('drain', resolve);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#in.off('data', this.#onData);
    this.#in.off('error', this.#onError);
    if (this.#in.listenerCount('data') === 0) this.#in.pause();
    this.#pieces = [];
    this.#skipping = undefined;
    this.onclose?.();
  }
}
