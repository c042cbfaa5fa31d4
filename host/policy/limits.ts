/**
 * @module host/policy/limits
 * The sandbox limits of one plugin: the policy's `limits`, with the plugin's own overrides, and the
 * policy's request body cap (the sandbox refuses a larger ctx.http body itself, before it reaches
 * the bridge). Calls and start-up probes use the same.
 */
import type { SandboxLimits } from '../../contracts/protocol.js';
import type { Policy } from './schema.js';

export function sandboxLimits(policy: Policy, pluginName: string): SandboxLimits {
  return {
    ...policy.limits,
    // Parsed from JSON, an override's key is a number or absent, never undefined.
    ...(((Object.hasOwn(policy.plugins, pluginName) ? policy.plugins[pluginName]?.limits : undefined) ??
      {}) as Partial<SandboxLimits>),
    maxRequestBodyBytes: policy.http.maxRequestBodyBytes,
  };
}
