/**
 * @module sdk/define
 * `definePlugin`, `defineTool` and `z`. A tool's zod object schema types its handler's `args` and
 * becomes the manifest's `inputSchema` at build time; `workbench plugin build` replaces this module
 * with a few lines in the runtime bundle. The SDK and all it reaches (zod, contracts/manifest,
 * contracts/forbidden-headers, contracts/plugin-api, contracts/protocol) type-check with plain
 * ECMAScript types: none of them may use Node.js or the bridge (test/host/plugin-sdk/typecheck.test.ts).
 */
import * as z from 'zod';
import type { authSchema, toolAnnotationsSchema } from '../contracts/manifest.js';
import type { PluginContext } from '../contracts/plugin-api.js';

export { z };
export type {
  HttpError,
  HttpFunction,
  HttpHeaders,
  HttpInit,
  HttpResponse,
  ImageResult,
  JsonValue,
  PluginContext,
  PluginLog,
} from '../contracts/plugin-api.js';

/** A tool's arguments: a zod object schema (`z.object`, `z.strictObject` or `z.looseObject`). */
export type InputSchema = z.ZodObject;

/** MCP tool hints: readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title. */
export type ToolAnnotations = z.input<typeof toolAnnotationsSchema>;

/** How the credential is obtained and applied: none, apikey, oauth2 or cookie (see docs/plugins.md). */
export type PluginAuthSpec = z.input<typeof authSchema>;

export interface ToolSpec<S extends InputSchema> {
  /** what the tool does, when to use it and what it returns — written for an agent */
  description: string;
  /** the arguments; becomes the manifest's inputSchema (defaults and descriptions included) */
  input: S;
  annotations?: ToolAnnotations;
  /**
   * Runs in the sandbox with arguments already validated and defaulted against `input`. Returns
   * JSON; throws an Error whose message the agent reads.
   */
  handler(ctx: PluginContext, args: z.output<S>): Promise<unknown>;
}

/** Marks what definePlugin/defineTool made, so the build can tell them from other objects. */
export const TOOL_MARK = 'workbench.tool/1';
export const PLUGIN_MARK = 'workbench.plugin/1';

export interface ToolDefinition<S extends InputSchema = InputSchema> extends ToolSpec<S> {
  readonly kind: typeof TOOL_MARK;
}

export interface PluginSpec<T extends Record<string, ToolDefinition>> {
  /** kebab-case, unique among installed plugins */
  name: string;
  /** semantic version, e.g. "1.0.0" */
  version: string;
  displayName: string;
  description: string;
  auth: PluginAuthSpec;
  /** host names the plugin may reach (no scheme, no port) */
  egress?: string[];
  /** also any public host over https, never with the credential (see docs/plugins.md) */
  egressAnyPublicHost?: boolean;
  /** tool name (snake_case, prefixed with the plugin's name) → definition */
  tools: T;
}

export interface PluginDefinition<
  T extends Record<string, ToolDefinition> = Record<string, ToolDefinition>,
> extends PluginSpec<T> {
  readonly kind: typeof PLUGIN_MARK;
}

/** Defines one tool; `args` in the handler is typed from the `input` schema. */
export function defineTool<S extends InputSchema>(spec: ToolSpec<S>): ToolDefinition<S> {
  return { ...spec, kind: TOOL_MARK };
}

/** Defines the plugin: `export default definePlugin({...})` in plugin.ts. */
export function definePlugin<T extends Record<string, ToolDefinition>>(spec: PluginSpec<T>): PluginDefinition<T> {
  return { ...spec, kind: PLUGIN_MARK };
}

/** The argument type of a defined tool, for helpers that take a tool's args. */
export type ToolArgs<T> = T extends ToolDefinition<infer S> ? z.output<S> : never;
