/**
 * @module host/registry/builtin-plugin
 * A built-in integration (host/builtins) as the registry serves it: a LoadedPlugin with no folder
 * and no plugin.js, whose tools are compiled and checked exactly as a plugin's are, so that
 * discovery, get_tool_schema, validation and the policy see no difference. Its name is reserved: a
 * plugin folder that takes it, or clashes with its tools (namespace.ts), is refused.
 */
import { createHash } from 'node:crypto';
import { fail } from '../../contracts/errors.js';
import { describeIssues, manifestSchema } from '../../contracts/manifest.js';
import type { BuiltinIntegration } from '../builtins/types.js';
import { META_TOOL_NAMES } from '../meta-tools/names.js';
import { compileTool } from './load-plugins.js';
import type { LoadedPlugin, LoadedTool } from './loaded-plugin.js';
import { namespaceProblems, toolPrefixOf } from './namespace.js';

/** What stands for a built-in's folder in reports and logs. */
export const BUILTIN_DIR = '(built-in)';

/** The built-in as a LoadedPlugin; a manifest that breaks a rule is a bug in the gateway, said at start-up. */
export function builtinPlugin(builtin: BuiltinIntegration): LoadedPlugin {
  const parsed = manifestSchema.safeParse(builtin.manifest);
  if (!parsed.success)
    throw fail('GW_ERR_INTERNAL_INVARIANT', {
      message: `built-in ${builtin.manifest.name}: ${describeIssues(parsed.error)}`,
    });
  const manifest = parsed.data;
  const problems = namespaceProblems(manifest, META_TOOL_NAMES);
  const missing = manifest.tools.map((t) => t.name).filter((n) => typeof builtin.handlers[n] !== 'function');
  if (problems.length > 0 || missing.length > 0 || manifest.auth.type !== 'none')
    throw fail('GW_ERR_INTERNAL_INVARIANT', {
      message: `built-in ${manifest.name}: ${[...problems, ...missing.map((n) => `no handler for ${n}`)].join('; ') || 'auth must be none'}`,
    });
  const tools = new Map<string, LoadedTool>();
  for (const tool of manifest.tools) tools.set(tool.name, { manifest: tool, ...compileTool(tool) });
  const hash = createHash('sha256').update(JSON.stringify(manifest)).digest('hex');
  return {
    manifest,
    dir: BUILTIN_DIR,
    source: '',
    sourceHash: hash,
    manifestHash: hash,
    toolPrefix: toolPrefixOf(manifest) as string,
    tools,
    builtin,
  };
}
