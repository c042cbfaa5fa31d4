/**
 * @module host/plugin-sdk/resolve-guard
 * The esbuild plugin that decides what a plugin's imports become: Node built-ins are refused with
 * an error naming the import; `workbench/plugin-sdk` resolves to the SDK (sdk/index.ts); in the
 * runtime bundle the SDK's definitions (sdk/define.ts) and zod are replaced by the shims (zod is
 * kept only with --keep-zod), while the SDK's helpers are bundled as they are, what is used of them.
 */
import { builtinModules } from 'node:module';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { RUNTIME_SDK_SOURCE, zodStubSource } from './runtime-shims.js';

/** The bare specifier authors outside this repository import the SDK by. */
export const SDK_SPECIFIER = 'workbench/plugin-sdk';
const NAMESPACE = 'workbench-sdk';
const BUILTINS = new Set(builtinModules);

export interface GuardOptions {
  phase: 'manifest' | 'runtime';
  /** absolute path of the SDK's entry (sdk/index.ts) */
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

/** A relative import of this SDK's entry from inside the repository (e.g. test fixtures). */
function isRelativeSdkImport(specifier: string, importer: string, sdkPath: string): boolean {
  if (!/^\.{1,2}\//.test(specifier)) return false;
  const target = path.resolve(path.dirname(importer), specifier).replace(/\.[jt]s$/, '');
  return target === sdkPath.replace(/\.ts$/, '') || target === path.dirname(sdkPath);
}

/** The SDK's own import of its definitions, which the runtime bundle replaces with the shim. */
function isSdkDefine(specifier: string, importer: string, sdkPath: string): boolean {
  return path.dirname(importer) === path.dirname(sdkPath) && /^\.\/define(\.[jt]s)?$/.test(specifier);
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
        if (spec === SDK_SPECIFIER || isRelativeSdkImport(spec, args.importer, options.sdkPath)) return { path: options.sdkPath };
        if (runtime && isSdkDefine(spec, args.importer, options.sdkPath)) return { path: 'define', namespace: NAMESPACE };
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
