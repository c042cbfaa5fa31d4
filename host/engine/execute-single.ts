/**
 * @module host/engine/execute-single
 * One execution, read top to bottom:
 *   lookup → cancelled? → key revoked? → rate limits → policy → connection → argument size →
 *   validate (defaults) → sandbox run (credential loaded lazily by the bridge, refreshed if stale)
 *   → normalise → audit + log + metrics.
 * It never throws: every failure becomes an error item, and every path writes one audit event.
 * One file on purpose (a little over 400 lines): it is the host half of an execution that
 * docs/lifecycle.md describes step by step, and it is read as one story; each step is a short
 * function below the one that calls it.
 */
import { randomUUID } from 'node:crypto';
import type { CallScope } from '../bridge/index.js';
import type { RunOutcome, RunTask, SandboxLimits } from '../../contracts/protocol.js';
import type { Credential } from '../connections/types.js';
import type { PluginManifest } from '../../contracts/manifest.js';
import { decideToolAccess } from '../policy/tenancy.js';
import { sandboxLimits } from '../policy/limits.js';
import type { ResolvedTool } from '../registry/registry.js';
import {
  cancelled,
  forbidden,
  invalidArguments,
  isErrorItem,
  notConnected,
  toolNotFound,
  type ErrorItem,
  type ExecutionItem,
  type ExecutionRequest,
} from './outcomes.js';
import { whyNotConnectable } from '../connections/connectable.js';
import { holdsMoreValuesThan, jsonLengthOver, validateArguments, VALIDATION_BUDGET } from './validate-args.js';
import { fail } from '../../contracts/errors.js';
import { resultItem } from './result-item.js';
import { runBuiltin } from './run-builtin.js';

export type { BridgeDispatcher, Caller, EngineDeps, SandboxRunner } from './engine-deps.js';
import type { Caller, EngineDeps } from './engine-deps.js';

type Refusal =
  | 'not_found'
  | 'cancelled'
  | 'key_revoked'
  | 'args_too_large'
  | 'forbidden'
  | 'rate_limited'
  | 'not_connected'
  | 'invalid_arguments'
  | 'schema_error';

export async function executeSingle(
  deps: EngineDeps,
  caller: Caller,
  execution: ExecutionRequest,
): Promise<ExecutionItem> {
  const started = performance.now();
  // the name as the caller spelled it; once resolved, the tool's own name (audit, metrics and logs
  // must not take a label per spelling: "Echo_Ping", "ECHO_PING " would each make new series)
  let toolName = typeof execution.tool === 'string' ? execution.tool : String(execution.tool);
  let integration: string | undefined;
  let schemaError: string | undefined;
  let ranHandler = false;
  let item: ExecutionItem;
  try {
    // as get_tool_schema reads a name: exact, else trimmed and lower-cased (tool names are snake_case)
    const found = deps.registry.tool(toolName) ?? deps.registry.tool(toolName.trim().toLowerCase());
    const resolved =
      found && (caller.integration === undefined || found.plugin.manifest.name === caller.integration)
        ? found
        : undefined;
    if (!resolved) {
      // an execution of a tool that does not exist takes from the budgets too: each is audited,
      // and a key must not write audit rows without bound
      const wait = caller.signal?.aborted ? undefined : await deps.rateLimiter.take(caller.user.id, caller.user.tenant);
      item =
        wait === undefined
          ? refuse(deps, 'not_found', undefined, toolNotFound(toolName))
          : refuse(deps, 'rate_limited', undefined, rateLimited(undefined, toolName, wait));
    } else {
      integration = resolved.plugin.manifest.name;
      toolName = resolved.tool.manifest.name;
      const pre = await checkBeforeRun(deps, caller, resolved, execution.args);
      if ('refusal' in pre) {
        item = refuse(deps, pre.refusal, integration, pre.item);
        if (pre.refusal === 'schema_error') schemaError = pre.item.error;
      } else if (caller.signal?.aborted) {
        // cancelled before or while the checks ran (they await the connection look-up)
        item = refuse(deps, 'cancelled', integration, cancelled(integration, false));
      } else {
        schemaError = pre.schemaError;
        const ran = resolved.plugin.builtin
          ? await runBuiltin(deps, caller, resolved, pre.args)
          : await runInSandbox(deps, caller, resolved, pre);
        if (ran === NOT_STARTED) {
          // cancelled while it waited for a sandbox slot: it never ran, like one cancelled earlier
          item = refuse(deps, 'cancelled', integration, cancelled(integration, false));
        } else {
          ranHandler = true;
          item = ran;
        }
      }
    }
  } catch (err) {
    deps.logger.error({ err, tool: toolName, requestId: caller.requestId }, 'execution failed inside the gateway');
    item = { error: `Internal error (request ${caller.requestId})`, code: 'GW_ERR_ENGINE_INTERNAL' };
  }
  const durationMs = performance.now() - started;
  await observe(deps, caller, {
    toolName,
    integration,
    item,
    durationMs,
    ranHandler,
    schemaError,
    args: execution.args,
  });
  return item;
}

/** Ready to run: the arguments, the connection's config and its own instance (if it names one). */
interface Ready {
  args: unknown;
  config: Record<string, unknown>;
  instance?: string | undefined;
  schemaError?: string;
}
type PreCheck = { refusal: Refusal; item: ErrorItem } | Ready;

async function checkBeforeRun(
  deps: EngineDeps,
  caller: Caller,
  resolved: ResolvedTool,
  rawArgs: unknown,
): Promise<PreCheck> {
  const { manifest } = resolved.plugin;
  const tool = resolved.tool.manifest.name;
  // a cancelled request's executions spend no rate budget and look nothing up
  if (caller.signal?.aborted) return { refusal: 'cancelled', item: cancelled(manifest.name, false) };
  if (caller.keyValid && !(await caller.keyValid()))
    return {
      refusal: 'key_revoked',
      item: {
        error: 'The API key of this request was revoked while it ran; this execution was not started.',
        code: 'GW_ERR_ENGINE_KEY_REVOKED',
        integration: manifest.name,
        tool,
      },
    };
  // every execution that is not cancelled takes from the budgets, refused ones included (each is audited)
  const wait = await deps.rateLimiter.take(caller.user.id, caller.user.tenant);
  if (wait !== undefined) return { refusal: 'rate_limited', item: rateLimited(manifest.name, tool, wait) };

  const decision = decideToolAccess(deps.policy, caller.user.tenant, manifest.name, tool);
  if (!decision.allowed)
    return { refusal: 'forbidden', item: forbidden(manifest.name, tool, decision.rule, decision.reason) };

  let config: Record<string, unknown> = {};
  let instance: string | undefined;
  if (manifest.auth.type !== 'none') {
    const conn = await deps.connections.lookup(caller.user.id, manifest);
    if (!conn.connected)
      return {
        refusal: 'not_connected',
        item: notConnected(manifest.name, conn.reason, whyNotConnectable(manifest, deps.connections.clientFor)),
      };
    config = conn.config;
    instance = conn.instance;
  }

  const args = rawArgs === undefined || rawArgs === null ? {} : rawArgs;
  // the sandbox refuses arguments over maxArgsBytes anyway: refuse them before the schema walks
  // them on the event loop (a 4 MB array of a million strings took 2 s to validate)
  const maxArgsBytes = sandboxLimits(deps.policy, manifest.name).maxArgsBytes;
  if (jsonLengthOver(args, maxArgsBytes))
    return {
      refusal: 'args_too_large',
      item: {
        error: `the arguments are larger than ${maxArgsBytes} bytes`,
        code: 'GW_ERR_SANDBOX_ARGS_TOO_LARGE',
        integration: manifest.name,
        tool,
      },
    };
  // and the work of checking them against the schema is bounded too
  const maxValues = Math.floor(VALIDATION_BUDGET / Math.max(1, resolved.tool.schemaSize));
  if (holdsMoreValuesThan(args, maxValues))
    return {
      refusal: 'invalid_arguments',
      item: invalidArguments(
        tool,
        `(root): the arguments hold more than ${maxValues} values, more than this tool's schema (${resolved.tool.schemaSize} sub-schemas per value) may check in one call; send fewer`,
      ),
    };
  const v = validateArguments(resolved.tool.validator, args);
  if (v.kind === 'invalid') return { refusal: 'invalid_arguments', item: invalidArguments(tool, v.message) };
  if (v.kind === 'schema-error') {
    const error = `SAFEPARSE_ERROR: ${v.message}`;
    if (deps.policy.schemaErrors === 'reject')
      return {
        refusal: 'schema_error',
        item: { error, code: 'GW_ERR_VALIDATION_SCHEMA_ERROR', integration: manifest.name, tool },
      };
    // passthrough (as in the seed): run with the raw arguments; no defaults were applied.
    return { args, config, instance, schemaError: error };
  }
  return { args: v.value, config, instance };
}

function rateLimited(integration: string | undefined, tool: string, wait: number): ErrorItem {
  return {
    error: `Rate limit reached; retry after ${wait} s`,
    code: 'GW_ERR_POLICY_RATE_LIMITED',
    ...(integration !== undefined ? { integration } : {}),
    tool,
    retryAfterSec: wait,
  };
}

function refuse(deps: EngineDeps, reason: Refusal, integration: string | undefined, item: ErrorItem): ErrorItem {
  deps.metrics.refused.inc({ reason, integration: integration ?? '' });
  return item;
}

/**
 * The reason every call's signal is aborted with when the call is over (requests still in flight
 * are cancelled; the bridge reads only `signal.aborted`). One shared value: the default reason is a
 * new DOMException with a stack trace per call, ~2 % of the host's CPU under load.
 */
const CALL_ENDED = Object.freeze(fail('GW_ERR_BRIDGE_CALL_ENDED', { message: 'the call is over' }));

/** runInSandbox's answer for a call the client cancelled while it waited for a sandbox slot. */
const NOT_STARTED = Symbol('not started');

async function runInSandbox(
  deps: EngineDeps,
  caller: Caller,
  resolved: ResolvedTool,
  ready: Ready,
): Promise<ExecutionItem | typeof NOT_STARTED> {
  const manifest = resolved.plugin.manifest;
  const limits: SandboxLimits = sandboxLimits(deps.policy, manifest.name);
  const ended = new AbortController();
  const credential: CredentialTrouble = {};
  const scope = callScope(deps, caller, manifest, limits, ended.signal, credential);
  // the connection's own instance: reachable as if declared, and the only host its credential goes to
  if (ready.instance !== undefined) scope.instance = ready.instance;
  const task = runTask(deps, caller, resolved, ready.args, ready.config, limits);
  const outcome = await runUntilCancelled(deps, task, scope, caller.signal, ended);
  if (!outcome.ok && outcome.error.code === 'GW_ERR_SANDBOX_CANCELLED') return NOT_STARTED;
  deps.metrics.sandboxCalls.inc({ outcome: outcome.ok ? 'ok' : outcome.error.code });
  return itemOf(deps, caller, resolved, outcome, credential);
}

/** Why the credential the bridge loaded lazily for a call could not be had, if it could not. */
interface CredentialTrouble {
  gone?: string;
  error?: string;
}

/** What the bridge needs of the call: its plugin, its request budget, its end, its credential (loaded on first use). */
function callScope(
  deps: EngineDeps,
  caller: Caller,
  manifest: PluginManifest,
  limits: SandboxLimits,
  ended: AbortSignal,
  trouble: CredentialTrouble,
): CallScope {
  let credentialPromise: Promise<Credential | undefined> | undefined;
  return {
    manifest,
    requestCount: { n: 0 },
    maxRequests: limits.maxRequestsPerCall,
    signal: ended,
    getCredential: () => {
      credentialPromise ??= deps.connections.credential(caller.user.id, manifest).then(
        (c) => {
          if (!c) trouble.gone = 'the connection was removed or needs to be re-authorised';
          return c;
        },
        (err: unknown) => {
          trouble.error = err instanceof Error ? err.message : String(err);
          throw err;
        },
      );
      return credentialPromise;
    },
  };
}

function runTask(
  deps: EngineDeps,
  caller: Caller,
  resolved: ResolvedTool,
  args: unknown,
  config: Record<string, unknown>,
  limits: SandboxLimits,
): RunTask {
  const { plugin } = resolved;
  const manifest = plugin.manifest;
  const task: RunTask = {
    callId: randomUUID(),
    plugin: { name: manifest.name, version: manifest.version, source: plugin.source, sourceHash: plugin.sourceHash },
    tool: resolved.tool.manifest.name,
    argsJson: JSON.stringify(args),
    config,
    limits,
    // its share of the sandbox (sandbox.maxUserShare) is counted by the user's id, never by the key
    user: caller.user.id,
  };
  if (deps.policy.sandbox.contextMode === 'per-tenant') task.contextKey = caller.user.tenant;
  return task;
}

/** The sandbox run; the client's cancellation stops its ctx.http requests, and they all end with the run. */
async function runUntilCancelled(
  deps: EngineDeps,
  task: RunTask,
  scope: CallScope,
  cancel: AbortSignal | undefined,
  ended: AbortController,
): Promise<RunOutcome> {
  const onCancel = (): void => ended.abort(CALL_ENDED);
  cancel?.addEventListener('abort', onCancel, { once: true });
  try {
    return await deps.sandbox.run(task, (req, delivered) => deps.bridge.dispatch(req, scope, delivered), cancel);
  } finally {
    cancel?.removeEventListener('abort', onCancel);
    ended.abort(CALL_ENDED);
  }
}

/** The execution's item from the run's outcome: cancelled, credential trouble, the result, or the handler's error. */
function itemOf(
  deps: EngineDeps,
  caller: Caller,
  resolved: ResolvedTool,
  outcome: RunOutcome,
  credential: CredentialTrouble,
): ExecutionItem {
  const manifest = resolved.plugin.manifest;
  // A handler that still finished keeps its result; one that failed most likely failed because its
  // requests were stopped, and says so.
  if (!outcome.ok && caller.signal?.aborted) {
    // keep what the handler said: it may have failed for its own reason (a timeout, a 404) just as the cancellation came
    const item = cancelled(manifest.name, true);
    return {
      ...item,
      error: `${item.error}; the handler then failed (${outcome.error.code}): ${outcome.error.message.slice(0, 500)}`,
    };
  }
  if (credential.gone)
    return notConnected(manifest.name, credential.gone, whyNotConnectable(manifest, deps.connections.clientFor));
  if (credential.error)
    return {
      error: `Could not load the ${manifest.name} credential: ${credential.error}`,
      code: 'GW_ERR_ENGINE_CREDENTIAL_FAILED',
      integration: manifest.name,
    };
  if (!outcome.ok) return { error: outcome.error.message, code: outcome.error.code };
  return resultItem(deps, caller, resolved, outcome.resultJson);
}

interface Observation {
  toolName: string;
  integration: string | undefined;
  item: ExecutionItem;
  durationMs: number;
  ranHandler: boolean;
  schemaError: string | undefined;
  args: unknown;
}

/**
 * The audit text of a failed execution. A handler that failed after a SAFEPARSE_ERROR (passthrough
 * ran it with the raw arguments) keeps that error in the text too: it is what to grep for when
 * defaults went missing, and it is usually why the handler failed.
 */
function auditError(item: ErrorItem, schemaError: string | undefined): string {
  const text = item.message && item.error === 'NOT_CONNECTED' ? item.message : item.error;
  return schemaError && item.code !== 'GW_ERR_VALIDATION_SCHEMA_ERROR' ? `${schemaError}; then: ${text}` : text;
}

async function observe(deps: EngineDeps, caller: Caller, o: Observation): Promise<void> {
  const success = !isErrorItem(o.item);
  const errorItem = isErrorItem(o.item) ? o.item : undefined;
  await deps.audit.record({
    action: 'EXECUTE',
    tenant: caller.user.tenant,
    userId: caller.user.id,
    tool: o.toolName,
    ...(o.integration !== undefined ? { integration: o.integration } : {}),
    success,
    ...(errorItem ? { errorCode: errorItem.code, error: auditError(errorItem, o.schemaError) } : {}),
    ...(success && o.schemaError ? { errorCode: 'GW_ERR_VALIDATION_SCHEMA_ERROR', error: o.schemaError } : {}),
    durationMs: o.durationMs,
    transport: caller.transport,
    requestId: caller.requestId,
    ...(deps.policy.audit.storeArguments ? { args: o.args } : {}),
  });
  const line = {
    event: o.ranHandler ? 'tool_execution' : 'tool_refused',
    requestId: caller.requestId,
    tenant: caller.user.tenant,
    userId: caller.user.id,
    ...(o.integration !== undefined ? { integration: o.integration } : {}),
    tool: o.toolName,
    success,
    durationMs: Math.round(o.durationMs * 10) / 10,
    transport: caller.transport,
    ...(errorItem ? { errorCode: errorItem.code, error: errorItem.error.slice(0, 500) } : {}),
  };
  if (!o.ranHandler || o.integration === undefined) {
    // Refusals are audited and counted; their log line is debug-level to keep info logs to runs.
    deps.logger.debug(line, 'tool execution refused');
    return;
  }
  const labels = { integration: o.integration, tool: o.toolName, success: String(success) };
  deps.metrics.toolExecutions.inc(labels);
  deps.metrics.toolDuration.observe(labels, o.durationMs / 1000);
  if (success) deps.logger.info(line, 'tool executed');
  else deps.logger.warn(line, 'tool execution failed');
}
