/**
 * @module test/architecture/lifecycle-doc.unit
 * docs/lifecycle.md draws three orders the code keeps: the checks of one execution
 * (host/engine/execute-single.ts), the steps of the sandbox half of a call on each side of each
 * boundary (SandboxCall, ProcessCall, IsolateCall), and the bridge's steps for a ctx.http request
 * (host/bridge/create-bridge.ts). Each is compared here with the code, so that the doc cannot
 * drift from it unnoticed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { BRIDGE_INTERCEPTORS } from '../../host/bridge/create-bridge.js';
import { readSource, ROOT } from './source-graph.js';

const DOC = fs.readFileSync(path.join(ROOT, 'docs/lifecycle.md'), 'utf8');

/** The text of the doc's section under `heading`, up to the next section. */
function section(heading: string): string {
  const start = DOC.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `docs/lifecycle.md has a section "${heading}"`);
  const end = DOC.indexOf('\n## ', start + 1);
  return DOC.slice(start, end < 0 ? undefined : end);
}

/** The backticked names that open each numbered item of `text`, item by item (`a` / `b`, `c`: all of them). */
function numberedNames(text: string): string[][] {
  return [...text.matchAll(/^\d+\. (.*?)(?::|$)/gm)].map((m) =>
    [...(m[1] as string).matchAll(/`([^`]+)`/g)].map((n) => n[1] as string),
  );
}

/** The member names of class `name` in `file`, in declaration order, without `#`. */
function membersOf(file: string, name: string): string[] {
  const { node } = readSource(file);
  const found = node.statements.find(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === name,
  );
  assert.ok(found, `${file} declares class ${name}`);
  return found.members.flatMap((m) => (m.name ? [m.name.getText(node).replace(/^#/, '')] : []));
}

describe('docs/lifecycle.md and the code it describes', () => {
  it("the bridge's steps: numbered in the doc as BRIDGE_INTERCEPTORS runs them", () => {
    const documented = numberedNames(section('A ctx.http request in the bridge')).map((names) => names.join(' '));
    assert.deepEqual(
      documented,
      BRIDGE_INTERCEPTORS.map((step) => step.name),
    );
  });

  it("the bridge's steps: drawn in that order in create-bridge.ts's module doc", () => {
    const { node } = readSource('host/bridge/create-bridge.ts');
    const drawn = node.text.match(/^ \*\s+(redact-credentials[\s\S]*?transport)$/m);
    assert.ok(drawn, 'create-bridge.ts draws its steps');
    const names = (drawn[1] as string).split(/\s*(?:→|\n \*)\s*/).filter((n) => n !== '');
    assert.deepEqual(names, [...BRIDGE_INTERCEPTORS.map((step) => step.name), 'transport']);
  });

  it("the bridge's steps: in that order in the drawing of one execution", () => {
    const words: Record<string, string> = {
      'redact-credentials': 'redaction',
      'request-budget': 'request budget',
      'validate-request': 'validation',
      timeout: 'timeout',
      'follow-redirects': 'redirects',
      'egress-policy': 'egress',
      'inject-credential': 'credential injection',
      'map-upstream': 'upstream mapping',
      'cap-response-size': 'size cap',
    };
    const start = DOC.indexOf('ctx.http ──► bridge in the host');
    assert.ok(start >= 0, 'the drawing shows ctx.http going to the bridge');
    const drawing = DOC.slice(start, DOC.indexOf('GW_ERR_BRIDGE_*', start)).replace(/[│\s]+/g, ' ');
    const at = BRIDGE_INTERCEPTORS.map((step) => {
      const word = words[step.name];
      assert.ok(word, `a word for ${step.name} in the drawing`);
      const i = drawing.indexOf(word);
      assert.ok(i >= 0, `the drawing names "${word}" (${step.name})`);
      return i;
    });
    assert.deepEqual(
      at,
      [...at].sort((a, b) => a - b),
      `the drawing shows the steps in BRIDGE_INTERCEPTORS's order: ${drawing}`,
    );
  });

  it("the sandbox half of a call: each side's steps are its call object's methods, in the order they are written", () => {
    const text = section('The sandbox half of a call');
    const sides = [
      { file: 'host/supervisor/sandbox-call.ts', cls: 'SandboxCall' },
      { file: 'sandbox/process/process-call.ts', cls: 'ProcessCall' },
      { file: 'sandbox/worker/run-call.ts', cls: 'IsolateCall' },
    ];
    const blocks = text.split(/\n(?=[A-Z][^\n]*, `[A-Za-z]+` \()/).slice(1);
    assert.equal(blocks.length, sides.length, 'one list per side');
    sides.forEach(({ file, cls }, i) => {
      const block = blocks[i] as string;
      assert.ok(block.includes(`\`${cls}\` (${file})`), `list ${i + 1} is ${cls}'s (${file})`);
      const members = membersOf(file, cls);
      const documented = numberedNames(block).flat();
      assert.ok(documented.length >= 5, `${cls}: the doc names its steps`);
      const positions = documented.map((name) => {
        const at = members.indexOf(name);
        assert.ok(at >= 0, `${cls} has a method ${name}`);
        return at;
      });
      assert.deepEqual(
        positions,
        [...positions].sort((a, b) => a - b),
        `${cls}: the doc lists ${documented.join(', ')}; the class declares ${members.join(', ')}`,
      );
    });
  });

  it("one execution's checks: drawn in the order checkBeforeRun makes them", () => {
    const codes: Record<string, string> = {
      GW_ERR_ENGINE_CANCELLED: 'cancelled',
      GW_ERR_ENGINE_KEY_REVOKED: 'key_revoked',
      GW_ERR_POLICY_RATE_LIMITED: 'rate_limited',
      GW_ERR_POLICY_FORBIDDEN: 'forbidden',
      GW_ERR_ENGINE_NOT_CONNECTED: 'not_connected',
      GW_ERR_SANDBOX_ARGS_TOO_LARGE: 'args_too_large',
      GW_ERR_VALIDATION_INVALID_ARGS: 'invalid_arguments',
      GW_ERR_VALIDATION_SCHEMA_ERROR: 'schema_error',
    };
    const drawing = DOC.slice(DOC.indexOf('executeSingle\n'), DOC.indexOf('sandbox run ('));
    // each check's row ends with its code (a row's continuation lines carry none, or another check's in brackets)
    const drawn = [...drawing.matchAll(/(GW_ERR_[A-Z_]+)$/gm)]
      .map((m) => codes[m[1] as string])
      .filter((r) => r !== undefined);
    const { node } = readSource('host/engine/execute-single.ts');
    const check = node.statements.find(
      (s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'checkBeforeRun',
    );
    assert.ok(check, 'execute-single.ts has checkBeforeRun');
    const inCode = [...new Set([...check.getText(node).matchAll(/refusal: '([a-z_]+)'/g)].map((m) => m[1] as string))];
    assert.deepEqual(drawn, inCode);
  });
});
