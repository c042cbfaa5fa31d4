/**
 * @module host/registry/loaded-plugin
 * What reading a plugin folder yields (load-plugins.ts) and what the serving set is made of
 * (plugin-set.ts): a plugin with its compiled tools, or why a folder was refused.
 */
import type * as z from 'zod';
import type { PluginManifest, ToolManifest } from '../../contracts/manifest.js';
import type { BuiltinIntegration } from '../builtins/types.js';

export interface LoadedTool {
  manifest: ToolManifest;
  /** validator compiled from the JSON Schema at load time */
  validator: z.ZodType;
  /** sub-schemas one argument value may be checked against, at most (schema-size.ts) */
  schemaSize: number;
}

export interface LoadedPlugin {
  manifest: PluginManifest;
  dir: string;
  source: string;
  sourceHash: string;
  /** sha256 of manifest.json as read (with sourceHash: a reload keeps a plugin whose files did not change) */
  manifestHash: string;
  /** what every tool name starts with (namespace.ts) */
  toolPrefix: string;
  tools: Map<string, LoadedTool>;
  /** why its regular-expression literals could not be checked (acorn could not parse it): refused unless the probe refuses it first */
  unscanned?: string;
  /** a built-in integration (host/builtins): its tools run in the gateway, not in the sandbox; no folder, no plugin.js */
  builtin?: BuiltinIntegration;
}

export interface PluginLoadError {
  dir: string;
  file: string;
  message: string;
  /** the plugin's name, when the manifest got far enough to tell */
  name?: string;
  /** GW_ERR_PLUGIN_CLASH when it clashes with another plugin (plugin-set.ts); otherwise GW_ERR_PLUGIN_INVALID */
  code?: 'GW_ERR_PLUGIN_INVALID' | 'GW_ERR_PLUGIN_CLASH';
}

export interface LoadResult {
  plugins: LoadedPlugin[];
  errors: PluginLoadError[];
}
