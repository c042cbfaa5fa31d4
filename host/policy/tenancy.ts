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
  if (matches(rule.denyPlugins, plugin))
    return { allowed: false, rule: `tenants.${key}.denyPlugins`, reason: `plugin "${plugin}" is denied` };
  if (matches(rule.denyTools, tool))
    return { allowed: false, rule: `tenants.${key}.denyTools`, reason: `tool "${tool}" is denied` };
  const pluginAllowed = rule.allowPlugins.length === 0 || matches(rule.allowPlugins, plugin);
  const toolAllowed = rule.allowTools.length > 0 && matches(rule.allowTools, tool);
  if (!pluginAllowed && !toolAllowed)
    return {
      allowed: false,
      rule: `tenants.${key}.allowPlugins`,
      reason: `plugin "${plugin}" is not in the allow list`,
    };
  if (rule.allowTools.length > 0 && !toolAllowed && rule.allowPlugins.length === 0)
    return { allowed: false, rule: `tenants.${key}.allowTools`, reason: `tool "${tool}" is not in the allow list` };
  return { allowed: true };
}

export function decideToolAccess(
  policy: Pick<Policy, 'tenants'>,
  tenant: string,
  plugin: string,
  tool: string,
): Decision {
  for (const key of ['*', tenant]) {
    // own keys only: a tenant named "constructor" or "__proto__" must not find Object's members
    const rule = Object.hasOwn(policy.tenants, key) ? policy.tenants[key] : undefined;
    if (!rule) continue;
    const d = evaluateRule(key, rule, plugin, tool);
    if (!d.allowed) return d;
  }
  return { allowed: true };
}

/**
 * Names in the policy that match no loaded plugin or tool: `plugins.<name>` keys and the entries
 * of every tenant rule. They load (a plugin may be installed later, or be refused at load), but
 * a deny rule naming a plugin that is not there denies nothing, so start-up says so. Returns one
 * "<field>: <name>" per name.
 */
export function unknownPolicyNames(
  policy: Pick<Policy, 'tenants' | 'plugins'>,
  catalog: { plugin(name: string): unknown; tool(name: string): unknown },
): string[] {
  const out: string[] = [];
  for (const name of Object.keys(policy.plugins)) if (!catalog.plugin(name)) out.push(`plugins.${name}`);
  for (const [tenant, rule] of Object.entries(policy.tenants)) {
    for (const list of ['allowPlugins', 'denyPlugins'] as const)
      for (const name of rule[list])
        if (name !== '*' && !catalog.plugin(name)) out.push(`tenants.${tenant}.${list}: ${name}`);
    for (const list of ['allowTools', 'denyTools'] as const)
      for (const name of rule[list])
        if (name !== '*' && !catalog.tool(name)) out.push(`tenants.${tenant}.${list}: ${name}`);
  }
  return out;
}
