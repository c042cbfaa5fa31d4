/**
 * @module host/engine/run-builtin
 * Runs a built-in integration's handler (host/builtins) in place of a sandbox run: the same
 * deadline (the integration's `limits.wallMsPerCall`), the same result limit
 * (`limits.maxResultBytes`), the client's cancellation passed on as the call's signal, and every
 * failure an error item. A catalogue error a handler throws is its answer to the caller (a refused
 * address, a quota); anything else is a fault of the gateway, logged with the request id and
 * answered as GW_ERR_BUILTIN_FAILED without its text (it may hold what the caller must not see).
 */
import { fail, isWorkbenchError } from '../../contracts/errors.js';
import type { BuiltinCall } from '../builtins/types.js';
import { sandboxLimits } from '../policy/limits.js';
import type { ResolvedTool } from '../registry/registry.js';
import type { Caller, EngineDeps } from './engine-deps.js';
import { cancelled, type ErrorItem, type ExecutionItem } from './outcomes.js';
import { resultItem } from './result-item.js';

export async function runBuiltin(
  deps: EngineDeps,
  caller: Caller,
  resolved: ResolvedTool,
  args: unknown,
): Promise<ExecutionItem> {
  const builtin = resolved.plugin.builtin;
  const integration = resolved.plugin.manifest.name;
  const tool = resolved.tool.manifest.name;
  const handler = builtin?.handlers[tool];
  if (!handler)
    return failed(deps, caller, tool, fail('GW_ERR_INTERNAL_INVARIANT', { message: `no handler for ${tool}` }));
  const limits = sandboxLimits(deps.policy, integration);
  const ended = new AbortController();
  const onCancel = (): void => ended.abort(fail('GW_ERR_ENGINE_CANCELLED', { message: 'the client cancelled' }));
  caller.signal?.addEventListener('abort', onCancel, { once: true });
  const timer = setTimeout(
    () =>
      ended.abort(
        fail('GW_ERR_BUILTIN_TIMEOUT', {
          message: `${tool} ran past its ${limits.wallMsPerCall} ms deadline and was stopped`,
        }),
      ),
    limits.wallMsPerCall,
  );
  const call: BuiltinCall = {
    user: caller.user,
    signal: ended.signal,
    requestId: caller.requestId,
    publicUrl: deps.publicUrl ?? '',
  };
  try {
    const result = await untilAborted(handler(call, args as Record<string, unknown>), ended.signal);
    return asItem(deps, caller, resolved, result, limits.maxResultBytes);
  } catch (err) {
    if (caller.signal?.aborted) return cancelled(integration, true);
    return failed(deps, caller, tool, err);
  } finally {
    clearTimeout(timer);
    caller.signal?.removeEventListener('abort', onCancel);
    ended.abort(fail('GW_ERR_BRIDGE_CALL_ENDED', { message: 'the call is over' }));
  }
}

/** The handler's promise, or the signal's reason once it is aborted (the handler is told by the same signal). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function asItem(
  deps: EngineDeps,
  caller: Caller,
  resolved: ResolvedTool,
  result: unknown,
  maxResultBytes: number,
): ExecutionItem {
  const json = JSON.stringify(result ?? null);
  const bytes = Buffer.byteLength(json);
  if (bytes > maxResultBytes)
    return {
      error: `the result of ${resolved.tool.manifest.name} is ${bytes} bytes, over the ${maxResultBytes} bytes allowed; ask for less`,
      code: 'GW_ERR_BUILTIN_RESULT_TOO_LARGE',
      integration: resolved.plugin.manifest.name,
    };
  return resultItem(deps, caller, resolved, json);
}

function failed(deps: EngineDeps, caller: Caller, tool: string, err: unknown): ExecutionItem {
  if (isWorkbenchError(err) && err.code !== 'GW_ERR_INTERNAL_INVARIANT')
    // its details (a quota's limit, a refused address) go to the caller with it
    return { ...(err.details ?? {}), error: err.message, code: err.code as ErrorItem['code'] };
  deps.logger.error({ err, tool, requestId: caller.requestId }, 'a built-in tool failed');
  return {
    error: `${tool} failed inside the gateway (request ${caller.requestId}); retry, and report it if it persists`,
    code: 'GW_ERR_BUILTIN_FAILED',
  };
}
