/**
 * @module host/plugin-sdk/resolve-guard
 * The esbuild plugin that decides what a plugin's imports become: Node built-ins are refused with
 * an error naming the import; `workbench/plugin-sdk` resolves to the SDK; in the runtime bundle
 * the SDK and zod are replaced by the shims (zod is kept only with --keep-zod).
 */
import { builtinModules } from 'node:module';
import type { Plugin } from 'esbuild';
import { RUNTIME_SDK_SOURCE, zodStubSource } from './runtime-shims.js';

/** The bare specifier authors outside this repository import the SDK by. */
export const SDK_SPECIFIER = 'workbench/plugin-sdk';
const NAMESPACE = 'workbench-sdk';
const BUILTINS = new Set(builtinModules);

export interface GuardOptions {
  phase: 'manifest' | 'runtime';
  /** absolute path of the SDK module (`define.js` beside this file) */
  sdkPath: string;
  /** where the SDK's own `zod` import resolves from (the package root) */
  packageRoot: string;
  /** runtime phase: bundle the real zod instead of the stub */
  keepZod: boolean;
  /** names exported by zod, for the stub */
  zodExports: readonly string[];
}

function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0] ?? '');
}

/** A relative import of this SDK from inside the repository (e.g. test fixtures). */
function isRelativeSdkImport(specifier: string): boolean {
  return /^\.{1,2}\//.test(specifier) && /(^|\/)plugin-sdk\/define(\.[jt]s)?$/.test(specifier);
}

export function resolveGuard(options: GuardOptions): Plugin {
  const runtime = options.phase === 'runtime';
  return {
    name: 'workbench-resolve-guard',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const spec = args.path;
        if (args.namespace === NAMESPACE) {
          // the runtime SDK re-exports z: the stub, or the real zod with --keep-zod
          return options.keepZod ? undefined : { path: 'zod', namespace: NAMESPACE };
        }
        if (isBuiltin(spec))
          return {
            errors: [{ text: `import "${spec}" is not allowed: plugin code runs in an isolate without Node.js built-ins (use ctx.http for network access)` }],
          };
        if (spec === SDK_SPECIFIER || isRelativeSdkImport(spec)) {
          if (runtime) return { path: 'define', namespace: NAMESPACE };
          return spec === SDK_SPECIFIER ? { path: options.sdkPath } : undefined;
        }
        if (runtime && !options.keepZod && /^zod(\/.*)?$/.test(spec)) return { path: 'zod', namespace: NAMESPACE };
        return undefined;
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: args.path === 'define' ? RUNTIME_SDK_SOURCE : zodStubSource(options.zodExports),
        loader: 'js',
        resolveDir: options.packageRoot,
      }));
    },
  };
}
