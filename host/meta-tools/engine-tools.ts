/**
 * @module host/meta-tools/engine-tools
 * The meta-tools that belong to the engine: execute_tools, continue_tool_result and whoami.
 */
import * as z from 'zod';
import { executeMany } from '../engine/execute-many.js';
import type { EngineDeps } from '../engine/execute-single.js';
import { isErrorItem } from '../engine/outcomes.js';
import { capBatch } from '../results/cap.js';
import { partCharsFor } from '../results/parts.js';
import { ContinuationQuotaError, type ContinuationStore } from '../results/continuations.js';
import { extractImages } from '../results/images.js';
import type { MetaTool } from './types.js';

export interface EngineToolDeps {
  engine: EngineDeps;
  continuations: ContinuationStore;
  maxChars: number;
  maxBatch: number;
}

// strict: a misspelt "args" ("arguments", "input", "params") is refused, never dropped (the tool
// would run with no arguments but its defaults)
const executionSchema = z.strictObject({
  tool: z.string().min(1).max(200).describe('Tool name, as returned by search_tools'),
  args: z.record(z.string(), z.unknown()).default({}).describe('Arguments matching the schema from get_tool_schema'),
});

export function createEngineMetaTools(deps: EngineToolDeps): MetaTool[] {
  return [executeToolsTool(deps), continueToolResultTool(deps), whoamiTool()];
}

function executeToolsTool(
  deps: EngineToolDeps,
): MetaTool<z.ZodObject<{ executions: z.ZodArray<typeof executionSchema> }>> {
  return {
    name: 'execute_tools',
    order: 30,
    title: 'Execute tools',
    description:
      'Run one or more integration tools in a batch. Pass {"executions":[{"tool":"<name>","args":{…}}]}; results come back in the same order as ' +
      `{"results":[{"result":…} | {"error":…,"code":…}]}. Up to ${deps.maxBatch} executions, 8 at a time; one failure never aborts the others. ` +
      'Find tool names with search_tools and their arguments with get_tool_schema first — do not guess. ' +
      'An item {"error":"NOT_CONNECTED","integration":X} means the user must connect X: call connect, give the user the link, then wait_for_connection and retry. ' +
      '"Invalid arguments for …" names the failing field: fix it from get_tool_schema. A result too large for the response is replaced by a stub with a continuationId: page it with continue_tool_result.',
    inputSchema: z.strictObject({ executions: z.array(executionSchema).min(1).max(deps.maxBatch) }),
    annotations: { openWorldHint: true },
    async handler(ctx, args) {
      const total = args.executions.length;
      await ctx.progress(0, total);
      const items = await executeMany(
        deps.engine,
        {
          user: ctx.user,
          transport: ctx.transport,
          requestId: ctx.requestId,
          signal: ctx.cancelled,
          keyValid: ctx.keyValid,
          resultBudget: ctx.resultBudget,
        },
        args.executions,
        (done) => {
          void ctx.progress(done, total);
        },
      );
      const { value, images } = extractImages(items, deps.engine.policy.images);
      const text = await capBatch(value as unknown[], {
        maxChars: deps.maxChars,
        userId: ctx.user.id,
        store: deps.continuations,
        toolOf: (i) => args.executions[i]?.tool ?? 'unknown',
        onStoreError: (err) =>
          err instanceof ContinuationQuotaError
            ? deps.engine.logger.warn(
                { userId: ctx.user.id, requestId: ctx.requestId, used: err.used, quota: err.quota },
                'an oversized result was not stored: the user is at resultCap.maxStoredCharsPerUser',
              )
            : deps.engine.logger.error(
                { err, requestId: ctx.requestId },
                'an oversized result could not be stored for continuation',
              ),
      });
      return { json: null, text, images, isError: items.every(isErrorItem) };
    },
  };
}

function continueToolResultTool(
  deps: EngineToolDeps,
): MetaTool<z.ZodObject<{ continuationId: z.ZodString; part: z.ZodDefault<z.ZodNumber> }>> {
  return {
    name: 'continue_tool_result',
    order: 40,
    title: 'Continue a truncated result',
    description:
      'Fetch one part of a result that execute_tools replaced with a {"truncated":true,"continuationId":…} stub. ' +
      'Call with {"continuationId":…,"part":1}, then part 2, … while "hasMore" is true, and join the "chunk" strings in order to get the full JSON.',
    inputSchema: z.strictObject({
      continuationId: z.string().min(1).max(100),
      part: z.number().int().min(1).default(1),
    }),
    annotations: { readOnlyHint: true },
    async handler(ctx, args) {
      // one part read from the store, not the whole body
      const page = await deps.continuations.page(
        ctx.user.id,
        args.continuationId,
        args.part,
        partCharsFor(deps.maxChars),
      );
      if (!page)
        return {
          json: { error: 'Unknown or expired continuationId', code: 'GW_ERR_RESULT_CONTINUATION_UNKNOWN' },
          isError: true,
        };
      const { totalParts, chunk } = page;
      if (chunk === undefined)
        return {
          json: { error: `part must be an integer from 1 to ${totalParts}`, code: 'GW_ERR_RESULT_PART_OUT_OF_RANGE' },
          isError: true,
        };
      const hasMore = args.part < totalParts;
      return {
        json: {
          continuationId: page.id,
          tool: page.tool,
          part: args.part,
          totalParts,
          totalChars: page.totalChars,
          hasMore,
          ...(hasMore ? { nextPart: args.part + 1 } : {}),
          chunk,
        },
      };
    },
  };
}

function whoamiTool(): MetaTool<z.ZodObject<Record<string, never>>> {
  return {
    name: 'whoami',
    order: 90,
    title: 'Who am I',
    description: 'Return the caller the gateway authenticated: user id, email and tenant.',
    inputSchema: z.strictObject({}),
    annotations: { readOnlyHint: true },
    async handler(ctx) {
      return { json: { id: ctx.user.id, email: ctx.user.email, tenant: ctx.user.tenant } };
    },
  };
}
