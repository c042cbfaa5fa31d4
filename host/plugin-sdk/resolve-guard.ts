/**
 * @module host/plugin-sdk/resolve-guard
 * The esbuild plugin that decides what a plugin's imports become: Node built-ins are refused with
 * an error naming the import; `workbench/plugin-sdk` resolves to the SDK (sdk/index.ts); in the
 * runtime bundle the SDK's definitions (sdk/define.ts) and zod are replaced by the shims (zod is
 * kept only with --keep-zod), while the SDK's helpers are bundled as they are, what is used of them.
 */
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { RUNTIME_SDK_SOURCE, zodStubSource } from './runtime-shims.js';
import { stripSchemas } from './strip-schemas.js';

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

/** `./http.js` → `http.ts`: an SDK module's name inside the namespace. */
const sdkModule = (specifier: string): string => `${specifier.replace(/^\.\//, '').replace(/\.[jt]s$/, '')}.ts`;

/**
 * SDK modules load from the `workbench-sdk` namespace under their own names (`workbench-sdk:http.ts`),
 * so the bundle's module comments name no folder of the machine that built it, and the output is
 * the same wherever the plugin and Workbench are.
 */
export function resolveGuard(options: GuardOptions): Plugin {
  const runtime = options.phase === 'runtime';
  const sdkDir = path.dirname(options.sdkPath);
  const stubZod = runtime && !options.keepZod;
  const refuse = (spec: string) => ({
    errors: [
      {
        text: `import "${spec}" is not allowed: plugin code runs in an isolate without Node.js built-ins (use ctx.http for network access)`,
      },
    ],
  });
  return {
    name: 'workbench-resolve-guard',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const spec = args.path;
        if (isBuiltin(spec)) return refuse(spec);
        if (stubZod && /^zod(\/.*)?$/.test(spec)) return { path: 'zod', namespace: NAMESPACE };
        if (args.namespace === NAMESPACE && /^\.\/[\w-]+(\.[jt]s)?$/.test(spec)) {
          const module = sdkModule(spec);
          // the runtime bundle keeps the SDK's helpers but not its build-time definitions
          return { path: runtime && module === 'define.ts' ? 'define' : module, namespace: NAMESPACE };
        }
        if (spec === SDK_SPECIFIER || isRelativeSdkImport(spec, args.importer, options.sdkPath))
          return { path: path.basename(options.sdkPath), namespace: NAMESPACE };
        return undefined;
      });
      // the runtime bundle leaves the schemas out of the plugin's own files (strip-schemas.ts)
      if (stubZod)
        build.onLoad({ filter: /\.[cm]?[jt]s$/, namespace: 'file' }, async (args) => {
          if (args.path.split(path.sep).includes('node_modules')) return undefined;
          const source = await fs.promises.readFile(args.path, 'utf8');
          const js = await build.esbuild.transform(source, {
            loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js',
            format: 'esm',
            target: 'es2022',
            sourcefile: args.path,
          });
          return { contents: stripSchemas(js.code), loader: 'js', resolveDir: path.dirname(args.path) };
        });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        if (args.path === 'define')
          return { contents: RUNTIME_SDK_SOURCE, loader: 'js', resolveDir: options.packageRoot };
        if (args.path === 'zod')
          return { contents: zodStubSource(options.zodExports), loader: 'js', resolveDir: options.packageRoot };
        return { contents: fs.readFileSync(path.join(sdkDir, args.path), 'utf8'), loader: 'ts', resolveDir: sdkDir };
      });
    },
  };
}
