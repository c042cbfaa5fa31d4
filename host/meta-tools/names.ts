/**
 * @module host/meta-tools/names
 * The names of the meta-tools the gateway serves, for the checks that run without a gateway
 * (`workbench plugin validate` and `plugin build`): no plugin tool may take one. A running gateway
 * checks against the meta-tools it actually registered; test/host/registry/plugin-namespace.test.ts keeps
 * this list equal to them.
 */
export const META_TOOL_NAMES: readonly string[] = [
  'search_tools',
  'get_tool_schema',
  'execute_tools',
  'continue_tool_result',
  'list_integrations',
  'connect',
  'wait_for_connection',
  'disconnect',
  'whoami',
];
