/**
 * @module host/engine/engine-deps
 * What the engine is given (EngineDeps, built once by host/app.ts) and what it knows of each
 * caller (Caller, built per request by the transports).
 */
import type { CallScope } from '../bridge/index.js';
import type { BridgeRequest, BridgeResult, HttpHandler, RunOutcome, RunTask } from '../../contracts/protocol.js';
import type { AuditSink } from '../audit/audit.js';
import type { ConnectionService } from '../connections/types.js';
import type { TransportName } from '../meta-tools/types.js';
import type { Policy } from '../policy/schema.js';
import type { Registry } from '../registry/registry.js';
import type { User } from '../storage/users.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { ExecutionRateLimiter } from './rate-limit.js';

/** The part of the sandbox the engine uses. */
export interface SandboxRunner {
  /** `signal`: a call still waiting for a slot when it is aborted never starts (GW_ERR_SANDBOX_CANCELLED) */
  run(task: RunTask, http: HttpHandler, signal?: AbortSignal): Promise<RunOutcome>;
}

export interface BridgeDispatcher {
  dispatch(req: BridgeRequest, scope: CallScope, delivered?: Promise<void>): Promise<BridgeResult>;
}

export interface EngineDeps {
  registry: Registry;
  policy: Policy;
  connections: ConnectionService;
  sandbox: SandboxRunner;
  bridge: BridgeDispatcher;
  audit: AuditSink;
  metrics: Metrics;
  logger: Logger;
  /** in memory (SQLite) or in the database (PostgreSQL: a round trip when a limit is set) */
  rateLimiter: ExecutionRateLimiter;
  /** the gateway's public origin, for links a built-in puts in its results (default: none) */
  publicUrl?: string;
}

export interface Caller {
  user: User;
  transport: TransportName;
  requestId: string;
  /** REST: the path's integration; tools of other integrations resolve to nothing */
  integration?: string;
  /** bytes of results the rest of this batch may still return (shared by its executions) */
  resultBudget?: { remaining: number } | undefined;
  /** whether the request's API key is still valid (not revoked since the request came); asked before each execution starts */
  keyValid?: (() => Promise<boolean>) | undefined;
  /**
   * Aborted when the client cancels the request (MCP `notifications/cancelled`; a dropped
   * connection is not a cancellation): executions not yet started are not started, and the
   * ctx.http requests of running ones are stopped.
   */
  signal?: AbortSignal;
}
