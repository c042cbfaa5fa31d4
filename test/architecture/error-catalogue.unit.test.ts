/**
 * Every error the production code raises comes from the error catalogue (contracts/errors.ts):
 * no `new Error(…)`, `new TypeError(…)` or other built-in error is made in host/, sandbox/,
 * contracts/ or common/, and no error class extends Error but through `WorkbenchError`. Source
 * text evaluated inside isolates is a string to the compiler, so it is not read as code here.
 * A built-in error made on purpose (one that must look like Node's own) is listed below with why.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { listSources, readSource } from './source-graph.js';

const BUILT_IN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'AggregateError',
]);

/** `file:line-text` of built-in errors made on purpose, with why. May only shrink. */
const ON_PURPOSE = new Map<string, string>([
  // a resolver's "no such host" must be Node's own dns error (code ENOTFOUND) to the HTTP client that asked
  ['host/bridge/safe-lookup.ts:new Error(…)', 'ENOTFOUND from the guarded resolver'],
  ['host/security-report/attack-dns.ts:new Error(…)', "ENOTFOUND from the report's stand-in resolver"],
]);

interface Found {
  file: string;
  line: number;
  what: string;
}

function builtInErrorsOf(file: string): Found[] {
  const { node } = readSource(file);
  const found: Found[] = [];
  const at = (n: ts.Node, what: string): void => {
    found.push({ file, line: node.getLineAndCharacterOfPosition(n.getStart(node)).line + 1, what });
  };
  const visit = (n: ts.Node): void => {
    if (
      (ts.isNewExpression(n) || ts.isCallExpression(n)) &&
      ts.isIdentifier(n.expression) &&
      BUILT_IN_ERRORS.has(n.expression.text)
    )
      at(n, `${ts.isNewExpression(n) ? 'new ' : ''}${n.expression.text}(…)`);
    if (ts.isClassLike(n))
      for (const clause of n.heritageClauses ?? [])
        for (const t of clause.types)
          if (ts.isIdentifier(t.expression) && BUILT_IN_ERRORS.has(t.expression.text))
            at(n, `class ${n.name?.text ?? '(anonymous)'} extends ${t.expression.text}`);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

const sources = listSources(['host', 'sandbox', 'contracts', 'common']);
const found = sources.flatMap(builtInErrorsOf);
// the catalogue's own class is the one that extends Error
const offenders = found.filter(
  (f) =>
    !(f.file === 'contracts/errors.ts' && f.what === 'class WorkbenchError extends Error') &&
    !ON_PURPOSE.has(`${f.file}:${f.what}`),
);

describe('errors come from the catalogue', () => {
  it('reads the production code (a test that reads nothing cannot fail)', () => {
    assert.ok(sources.length > 200, `only ${sources.length} files read`);
    assert.ok(
      found.some((f) => f.file === 'contracts/errors.ts'),
      'the catalogue class was not seen',
    );
  });

  it('no built-in error is made, and no error class extends Error, outside contracts/errors.ts', () => {
    assert.deepEqual(
      offenders.map((f) => `${f.file}:${f.line} ${f.what}`),
      [],
    );
  });

  it('each built-in error made on purpose is still there', () => {
    const seen = new Set(found.map((f) => `${f.file}:${f.what}`));
    assert.deepEqual(
      [...ON_PURPOSE.keys()].filter((k) => !seen.has(k)),
      [],
    );
  });
});
