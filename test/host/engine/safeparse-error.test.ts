/**
 * @module test/host/engine/safeparse-error
 * When validating arguments itself throws (a plugin schema bug that survived load-time
 * compilation), the engine records SAFEPARSE_ERROR in the audit and follows the policy: `reject`
 * (default) fails the execution; `passthrough` runs the handler with the raw arguments.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as z from 'zod';
import { executeSingle } from '../../../host/engine/execute-single.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { parsePolicy } from '../../../host/policy/load.js';
import { loadPluginDir } from '../../../host/registry/load-plugins.js';
import { Registry } from '../../../host/registry/registry.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const ECHO = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins', 'fixture-echo');

function registryWithThrowingSchema(name = 'echo_args'): Registry {
  const plugin = loadPluginDir(ECHO);
  const tool = plugin.tools.get(name);
  assert.ok(tool);
  tool.validator = z.object({ text: z.string() }).transform(() => {
    throw new Error('schema bug: cannot transform');
  });
  return new Registry([plugin]);
}

describe('SAFEPARSE_ERROR', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [path.dirname(ECHO)] });
  });
  after(async () => gw.close());

  const caller = () => ({ user: gw.user, transport: 'rest' as const, requestId: 'req-safeparse' });
  const auditFor = () =>
    gw.db.all<{ success: number; error_code: string; error: string }>(
      "SELECT success, error_code, error FROM audit_events WHERE request_id = 'req-safeparse' ORDER BY at, rowid",
    );

  it('rejects by default, audited once with the code', async () => {
    const engine = { ...gw.gateway.engine, registry: registryWithThrowingSchema() };
    const item = await executeSingle(engine, caller(), { tool: 'echo_args', args: { text: 'x', times: 2 } });
    assert.deepEqual(item, {
      error: 'SAFEPARSE_ERROR: schema bug: cannot transform',
      code: 'GW_ERR_VALIDATION_SCHEMA_ERROR',
      integration: 'fixture-echo',
      tool: 'echo_args',
    });
    const rows = await auditFor();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.error_code, 'GW_ERR_VALIDATION_SCHEMA_ERROR');
  });

  it('passthrough runs the handler with the raw arguments (no defaults) and audits one event', async () => {
    await gw.db.run("DELETE FROM audit_events WHERE request_id = 'req-safeparse'");
    const policy = parsePolicy({ schemaErrors: 'passthrough' });
    const engine = { ...gw.gateway.engine, policy, registry: registryWithThrowingSchema() };
    const item = await executeSingle(engine, caller(), { tool: 'echo_args', args: { text: 'x', times: 2 } });
    assert.deepEqual(item, { result: { text: 'xx', args: { text: 'x', times: 2 } } });
    const rows = await auditFor();
    assert.equal(rows.length, 1, 'one event per execution, not two');
    assert.equal(rows[0]?.success, 1);
    assert.match(rows[0]?.error ?? '', /^SAFEPARSE_ERROR: schema bug/);
  });

  it('passthrough whose handler then fails: the audit keeps SAFEPARSE_ERROR beside the failure', async () => {
    await gw.db.run("DELETE FROM audit_events WHERE request_id = 'req-safeparse'");
    const policy = parsePolicy({ schemaErrors: 'passthrough' });
    const engine = { ...gw.gateway.engine, policy, registry: registryWithThrowingSchema('echo_fail') };
    const item = await executeSingle(engine, caller(), {
      tool: 'echo_fail',
      args: { text: 'x', message: 'handler broke' },
    });
    assert.equal((item as { error: string }).error, 'handler broke', "the caller sees the handler's error");
    const rows = await auditFor();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.success, 0);
    assert.equal(rows[0]?.error_code, 'GW_ERR_SANDBOX_HANDLER_THREW');
    assert.match(rows[0]?.error ?? '', /^SAFEPARSE_ERROR: .*; then: handler broke$/);
  });
});
