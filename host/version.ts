/**
 * @module host/version
 * The package version, read from package.json once (served as MCP serverInfo.version).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from './paths.js';

export const VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
