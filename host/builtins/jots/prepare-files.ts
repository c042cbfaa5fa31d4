/**
 * @module host/builtins/jots/prepare-files
 * The files of a deploy or an update, made ready to store before anything is written: each path
 * normalised and checked (site-paths.ts), no file named twice, each content decoded (UTF-8 text
 * or strict base64) and measured, and the limits that need no database checked — the file count
 * of one call and each file's size — so a refusal stores nothing. The quotas that depend on what
 * is stored already (the site's totals, the user's) are checked by the service in its transaction.
 */
import { createHash } from 'node:crypto';
import { fail } from '../../../contracts/errors.js';
import type { JotsPolicy } from '../../policy/jots-policy.js';
import { contentTypeOf, normalisePath } from './site-paths.js';
import type { StoredFile } from './store.js';

export interface FileInput {
  path: string;
  content: string;
  encoding?: 'utf8' | 'base64';
}

/** Standard base64, padded; Buffer.from would read anything, dropping what is not base64. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The quotas a call's files are checked against before the database is read. */
export type FileQuotas = Pick<JotsPolicy, 'maxFilesPerSite' | 'maxFileBytes'>;

export function prepareFiles(files: readonly FileInput[], quotas: FileQuotas): StoredFile[] {
  if (files.length > quotas.maxFilesPerSite)
    throw fail(
      'GW_ERR_JOTS_QUOTA_FILES',
      { message: `${files.length} files were sent; a site may hold at most ${quotas.maxFilesPerSite}` },
      { details: { limit: quotas.maxFilesPerSite, requested: files.length } },
    );
  const seen = new Set<string>();
  return files.map((f) => {
    const path = normalisePath(f.path);
    if (seen.has(path))
      throw fail(
        'GW_ERR_JOTS_INVALID_PATH',
        { message: `file path "${path}" is given twice: send each file once` },
        { details: { path } },
      );
    seen.add(path);
    const bytes = decode(path, f);
    if (bytes.length > quotas.maxFileBytes)
      throw fail(
        'GW_ERR_JOTS_QUOTA_FILE_BYTES',
        { message: `"${path}" is ${bytes.length} bytes; a file may be at most ${quotas.maxFileBytes}` },
        { details: { path, limit: quotas.maxFileBytes, requested: bytes.length } },
      );
    return {
      path,
      contentType: contentTypeOf(path),
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      base64: bytes.toString('base64'),
    };
  });
}

/** Normalised delete paths: each once, and none among the files written by the same call. */
export function prepareDeletes(paths: readonly string[], written: readonly StoredFile[]): string[] {
  const writing = new Set(written.map((f) => f.path));
  const seen = new Set<string>();
  return paths.map((raw) => {
    const path = normalisePath(raw);
    if (writing.has(path) || seen.has(path))
      throw fail(
        'GW_ERR_JOTS_INVALID_PATH',
        { message: `"${path}" is ${writing.has(path) ? 'both written and deleted' : 'deleted twice'}: name it once` },
        { details: { path } },
      );
    seen.add(path);
    return path;
  });
}

function decode(path: string, f: FileInput): Buffer {
  if ((f.encoding ?? 'utf8') === 'utf8') return Buffer.from(f.content, 'utf8');
  const text = f.content.replace(/\s+/g, '');
  if (!BASE64.test(text))
    throw fail(
      'GW_ERR_JOTS_BAD_CONTENT',
      { message: `the content of "${path}" is marked base64 but is not valid (padded, standard-alphabet) base64` },
      { details: { path } },
    );
  return Buffer.from(text, 'base64');
}
