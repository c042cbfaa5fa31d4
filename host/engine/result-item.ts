/**
 * @module host/engine/result-item
 * A handler's result as the execution's item, whoever ran it (the sandbox or a built-in): its
 * bytes taken from the batch's result budget, and the images it may not show screened out.
 */
import type { ResolvedTool } from '../registry/registry.js';
import { screenImages } from '../results/images.js';
import type { ErrorItem, ExecutionItem } from './outcomes.js';
import type { Caller, EngineDeps } from './engine-deps.js';

/** The item for a result given as JSON text: the result, or the error for one over the batch's budget. */
export function resultItem(
  deps: EngineDeps,
  caller: Caller,
  resolved: ResolvedTool,
  resultJson: string,
): ExecutionItem {
  const integration = resolved.plugin.manifest.name;
  const dropped = overBatchBudget(deps, caller, integration, resultJson);
  if (dropped) return dropped;
  return {
    result: screenedResult(deps, resultJson, {
      integration,
      tool: resolved.tool.manifest.name,
      requestId: caller.requestId,
    }),
  };
}

/**
 * The error for a result that does not fit in what is left of the batch's result budget, or
 * undefined after taking its bytes from the budget. Bytes as the policy says (UTF-8), counted as
 * results arrive: the batch's results never take more than the budget in the host, whatever their order.
 */
function overBatchBudget(
  deps: EngineDeps,
  caller: Caller,
  integration: string,
  resultJson: string,
): ErrorItem | undefined {
  const budget = caller.resultBudget;
  if (!budget) return undefined;
  const bytes = Buffer.byteLength(resultJson);
  if (bytes > budget.remaining)
    return {
      error: `The results of this batch exceed ${deps.policy.requests.maxBatchResultBytes} bytes; this result (${bytes} bytes) was dropped after its handler ran. Split the batch or narrow the request.`,
      code: 'GW_ERR_RESULT_BATCH_TOO_LARGE',
      integration,
    };
  budget.remaining -= bytes;
  return undefined;
}

/**
 * The handler's result with each image that may not be shown replaced by an error in its place
 * (results/images.ts), for every transport: REST hands image sentinels on as they are. Only a
 * result whose JSON could hold a sentinel is walked (a key written with escapes holds `\u`).
 */
function screenedResult(
  deps: EngineDeps,
  resultJson: string,
  where: { integration: string; tool: string; requestId: string },
): unknown {
  const result = JSON.parse(resultJson) as unknown;
  if (!resultJson.includes('_mcpImage') && !resultJson.includes('\\u')) return result;
  const { value, refused } = screenImages(result, deps.policy.images);
  if (refused.length > 0) deps.logger.warn({ ...where, refused }, 'images in a result were refused');
  return value;
}
