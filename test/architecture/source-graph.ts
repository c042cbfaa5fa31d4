/**
 * Reads the project's own TypeScript sources as the compiler sees them: every file of the
 * production folders, the modules each imports (static imports, re-exports and `import()` with a
 * literal), and every function with the lines it spans. The architecture tests judge the graph.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Production code, by the process and the side of the trust boundary it runs on (docs/architecture.md). */
export const AREAS = ['host', 'sandbox', 'contracts', 'common', 'sdk'] as const;

export interface SourceImport {
  /** what the file wrote */
  specifier: string;
  /** the project file it names (relative to the root, `.ts`), or undefined for a package */
  target: string | undefined;
  typeOnly: boolean;
  line: number;
}

export interface SourceFile {
  file: string;
  imports: SourceImport[];
  node: ts.SourceFile;
}

function listTs(dir: string): string[] {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return listTs(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** Every TypeScript source file of the given folders (plugins: their plugin.ts and src/). */
export function listSources(dirs: readonly string[]): string[] {
  return dirs.flatMap((d) => listTs(d)).sort();
}

function resolveTarget(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [joined.replace(/\.js$/, '.ts'), joined, `${joined}.ts`, path.posix.join(joined, 'index.ts')];
  return (
    candidates.find((c) => fs.existsSync(path.join(ROOT, c)) && fs.statSync(path.join(ROOT, c)).isFile()) ?? joined
  );
}

function importsOf(file: string, node: ts.SourceFile): SourceImport[] {
  const found: SourceImport[] = [];
  const add = (spec: ts.Expression | undefined, typeOnly: boolean, at: ts.Node): void => {
    if (!spec || !ts.isStringLiteralLike(spec)) return;
    const line = node.getLineAndCharacterOfPosition(at.getStart(node)).line + 1;
    found.push({ specifier: spec.text, target: resolveTarget(file, spec.text), typeOnly, line });
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) add(n.moduleSpecifier, n.importClause?.isTypeOnly === true, n);
    else if (ts.isExportDeclaration(n)) add(n.moduleSpecifier, n.isTypeOnly, n);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) add(n.arguments[0], false, n);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) add(n.argument.literal, true, n);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

export function readSource(file: string): SourceFile {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const node = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  return { file, imports: importsOf(file, node), node };
}

export interface FunctionSpan {
  file: string;
  name: string;
  line: number;
  lines: number;
  /** the JSDoc or comment right above it says why it is long ("Long on purpose: …") */
  explained: boolean;
}

function nameOf(n: ts.Node, sf: ts.SourceFile): string {
  const named = n as { name?: ts.Node };
  if (named.name) return named.name.getText(sf);
  const parent = n.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(sf);
  return '(anonymous)';
}

/** Every function, method, arrow function and function expression, with the lines it spans. */
export function functionsOf(source: SourceFile): FunctionSpan[] {
  const sf = source.node;
  const spans: FunctionSpan[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && (n as { body?: ts.Node }).body) {
      const start = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      const holder = ts.isVariableDeclaration(n.parent)
        ? n.parent.parent.parent
        : ts.isPropertyAssignment(n.parent)
          ? n.parent
          : n;
      const comments = ts.getLeadingCommentRanges(sf.text, holder.getFullStart()) ?? [];
      const explained = comments.some((c) => /Long on purpose:/.test(sf.text.slice(c.pos, c.end)));
      spans.push({ file: source.file, name: nameOf(n, sf), line: start + 1, lines: end - start + 1, explained });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return spans;
}
