/**
 * @module host/paths
 * Where the package lives on disk, so that `plugins/` and `policies/` resolve the same way from
 * sources and from the compiled `dist/`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'policies'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return path.resolve(start, '..', '..', '..');
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
export const BUILTIN_PLUGINS_DIR = path.join(PACKAGE_ROOT, 'plugins');
export const DEFAULT_POLICY_FILE = path.join(PACKAGE_ROOT, 'policies', 'default.json');
export const SANDBOX_ENTRY = path.join(PACKAGE_ROOT, 'dist', 'sandbox', 'index.js');
