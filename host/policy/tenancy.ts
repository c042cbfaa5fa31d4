/**
 * @module host/policy/tenancy
 * Which plugins and tools a tenant may use. Pure: `(tenant, plugin, tool, policy) → Decision`.
 * Rules for the tenant's own name and for "*" both apply. A tool is allowed iff it matches every
 * non-empty allow list that applies and no deny entry; deny wins. Entries are exact names or "*".
 */
import type { Policy, TenantRule } from './schema.js';

export type Decision = { allowed: true } | { allowed: false; rule: string; reason: string };

const matches = (list: readonly string[], name: string): boolean => list.includes('*') || list.includes(name);

function evaluateRule(key: string, rule: TenantRule, plugin: string, tool: string): Decision {
  if (matches(rule.denyPlugins, plugin)) return { allowed: false, rule: `tenants.${key}.denyPlugins`, reason: `plugin "${plugin}" is denied` };
  if (matches(rule.denyTools, tool)) return { allowed: false, rule: `tenants.${key}.denyTools`, reason: `tool "${tool}" is denied` };
  const pluginAllowed = rule.allowPlugins.length === 0 || matches(rule.allowPlugins, plugin);
  const toolAllowed = rule.allowTools.length > 0 && matches(rule.allowTools, tool);
  if (!pluginAllowed && !toolAllowed)
    return { allowed: false, rule: `tenants.${key}.allowPlugins`, reason: `plugin "${plugin}" is not in the allow list` };
  if (rule.allowTools.length > 0 && !toolAllowed && rule.allowPlugins.length === 0)
    return { allowed: false, rule: `tenants.${key}.allowTools`, reason: `tool "${tool}" is not in the allow list` };
  return { allowed: true };
}

export function decideToolAccess(policy: Pick<Policy, 'tenants'>, tenant: string, plugin: string, tool: string): Decision {
  for (const key of ['*', tenant]) {
    // own keys only: a tenant named "constructor" or "__proto__" must not find Object's members
    const rule = Object.hasOwn(policy.tenants, key) ? policy.tenants[key] : undefined;
    if (!rule) continue;
    const d = evaluateRule(key, rule, plugin, tool);
    if (!d.allowed) return d;
  }
  return { allowed: true };
}
