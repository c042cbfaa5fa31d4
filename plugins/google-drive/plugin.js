/**
 * @module plugins/google-drive/plugin
 * Google Drive API v3 tools acting as the connected Google user (OAuth 2.0). Metadata calls go to
 * https://www.googleapis.com/drive/v3, text uploads to https://www.googleapis.com/upload/drive/v3
 * as multipart/related bodies built here. Self-contained (the plugin format allows no imports),
 * so the one error mapping, the search-expression builder, the upload body and the result shapers
 * live beside the handlers (why the file is longer than 400 lines). The gateway adds the Bearer
 * token: this code never sets Authorization.
 */

const API = 'https://www.googleapis.com/drive/v3';
const UPLOAD = 'https://www.googleapis.com/upload/drive/v3';
const SCOPE = 'https://www.googleapis.com/auth/drive';
const FOLDER = 'application/vnd.google-apps.folder';
const GDOC = 'application/vnd.google-apps.document';
const GSHEET = 'application/vnd.google-apps.spreadsheet';
const GSLIDES = 'application/vnd.google-apps.presentation';
/** characters of file content one drive_read_file call returns at most */
const MAX_CHARS = 50000;
/** a text file larger than this is not downloaded (the gateway's response cap is 8 MiB) */
const MAX_DOWNLOAD_BYTES = 5 * 1024 * 1024;

const LIST_FIELDS = 'nextPageToken,incompleteSearch,files(id,name,mimeType,modifiedTime,size,parents,driveId,webViewLink,trashed,owners(displayName,emailAddress))';
const DETAIL_FIELDS =
  'id,name,mimeType,description,size,createdTime,modifiedTime,parents,driveId,webViewLink,trashed,starred,shared,' +
  'owners(displayName,emailAddress),lastModifyingUser(displayName,emailAddress),shortcutDetails(targetId,targetMimeType),' +
  'capabilities(canEdit,canComment,canShare,canTrash,canDownload,canRename,canAddChildren)';
const WRITE_FIELDS = 'id,name,mimeType,parents,driveId,webViewLink,trashed,modifiedTime';
const PERMISSION_FIELDS = 'id,type,role,emailAddress,domain,displayName,expirationTime,deleted,allowFileDiscovery';

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Google answer becomes a message an agent can act on.

/** Google's error body: {error: {code, message, status, errors: [{reason, message}], details: [{reason}]}}. */
function parseGoogleError(text) {
  let body;
  try {
    body = JSON.parse(text || '{}');
  } catch {
    return { message: String(text || '').trim().slice(0, 300), status: '', reasons: [] };
  }
  const e = body && typeof body.error === 'object' && body.error ? body.error : {};
  const reasons = [];
  for (const x of Array.isArray(e.errors) ? e.errors : []) if (x && typeof x.reason === 'string') reasons.push(x.reason);
  for (const x of Array.isArray(e.details) ? e.details : []) if (x && typeof x.reason === 'string') reasons.push(x.reason);
  const message = typeof e.message === 'string' ? e.message : typeof body.error === 'string' ? body.error : '';
  return { message: message.trim().slice(0, 500), status: typeof e.status === 'string' ? e.status : '', reasons };
}

const RATE_REASONS = ['userRateLimitExceeded', 'rateLimitExceeded', 'sharingRateLimitExceeded', 'RATE_LIMIT_EXCEEDED'];
const SCOPE_REASONS = ['insufficientPermissions', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'insufficientScopes'];

function driveError(res, text, action) {
  const { message, status, reasons } = parseGoogleError(text);
  const code = res.status;
  const said = message ? ` Google said: ${message.replace(/[.\s]+$/, '')}.` : '';
  const reason = reasons.find((r) => r !== 'global') || '';
  if (code === 401) {
    return new Error(`Google rejected the access token (401) while trying to ${action}: reconnect google-drive.${said}`);
  }
  const daily = reasons.includes('dailyLimitExceeded');
  const limited = code === 429 || status === 'RESOURCE_EXHAUSTED' || (code === 403 && (daily || reasons.some((r) => RATE_REASONS.includes(r))));
  if (limited) {
    if (daily) return new Error(`Google Drive's daily quota is used up (${code} dailyLimitExceeded) while trying to ${action}: try again tomorrow.`);
    const after = res.headers.get('retry-after');
    const wait = after && /^\d+$/.test(after.trim()) ? `retry after ${Number(after)} seconds` : 'wait a minute and retry';
    return new Error(`Google Drive rate limited the request to ${action} (${code}${reason ? ` ${reason}` : ''}): ${wait}.`);
  }
  if (code === 403 && (reasons.some((r) => SCOPE_REASONS.includes(r)) || /insufficient authentication scopes/i.test(message))) {
    return new Error(`The google-drive connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-drive and approve Drive access.`);
  }
  if (code === 403) {
    return new Error(`Google Drive refused to ${action} (403${reason ? ` ${reason}` : ''}): ${message || 'your Google account lacks access to this file'}.`);
  }
  if (code === 404) {
    return new Error(`Google Drive found nothing while trying to ${action} (404): ${message || 'no such file'}. Check the id; Drive also answers 404 for a file you cannot see.`);
  }
  if (code === 400 || code === 409 || code === 412 || code === 422) {
    return new Error(`Google Drive refused to ${action} (${code}${reason ? ` ${reason}` : ''}): ${message || 'the request was not valid'}.`);
  }
  if (code >= 500) return new Error(`Google Drive had a server error (${code}) while trying to ${action}: retry later.${said}`);
  return new Error(`Google Drive answered HTTP ${code} while trying to ${action}.${said}`);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function qs(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${enc(k)}=${enc(v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** One Drive request. JSON answers are parsed; `raw` returns the response itself for content. */
async function drive(ctx, method, url, { query, body, headers, raw, action, tooLarge }) {
  const init = { method, headers: { accept: raw ? '*/*' : 'application/json', ...(headers || {}) } };
  if (body !== undefined) {
    if (typeof body === 'string') init.body = body;
    else {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
  }
  let res;
  try {
    res = await ctx.http(url + qs(query), init);
  } catch (err) {
    if (err && err.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') throw new Error(`The answer to ${action} was larger than the gateway accepts: ${tooLarge || 'ask for less'}.`);
    if (err && err.code === 'GW_ERR_BRIDGE_TIMEOUT') throw new Error(`Google Drive did not answer in time while trying to ${action}: retry, or ask for less.`);
    throw err;
  }
  if (!res.ok) throw driveError(res, await res.text(), action);
  if (raw) return res;
  const text = await res.text();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`Google Drive answered ${res.status} with something that is not JSON while trying to ${action}.`);
  }
}

/** A file id, or the id inside a Drive / Docs URL (…/d/<id>/…, …/folders/<id>, ?id=<id>). */
function fileIdOf(value, name = 'fileId') {
  const s = String(value || '').trim();
  const m = /\/(?:d|folders)\/([A-Za-z0-9_-]{2,})/.exec(s) || /[?&]id=([A-Za-z0-9_-]{2,})/.exec(s);
  const id = m ? m[1] : s;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) throw new Error(`${name} "${s.slice(0, 100)}" is neither a Drive file id nor a Drive link.`);
  return id;
}

// ---------------------------------------------------------------------------------------------
// The search expression (files.list `q`)

/** A string literal of Drive's query language: single quotes, with \ and ' escaped by a backslash. */
function literal(value) {
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

const KIND_MIME = {
  folder: FOLDER,
  document: GDOC,
  spreadsheet: GSHEET,
  presentation: GSLIDES,
  form: 'application/vnd.google-apps.form',
  pdf: 'application/pdf',
};
const KIND_PREFIX = { image: 'image/', video: 'video/', audio: 'audio/' };

function mimeClause(mime) {
  const m = mime.trim();
  const key = m.toLowerCase();
  if (Object.hasOwn(KIND_MIME, key)) return `mimeType = ${literal(KIND_MIME[key])}`;
  if (Object.hasOwn(KIND_PREFIX, key)) return `mimeType contains ${literal(KIND_PREFIX[key])}`;
  if (m.includes('/')) return `mimeType = ${literal(m)}`;
  throw new Error(`mimeType "${m}" is neither a MIME type (type/subtype) nor one of ${[...Object.keys(KIND_MIME), ...Object.keys(KIND_PREFIX)].join(', ')}.`);
}

/** RFC 3339 as Drive compares it: a bare date means its midnight (UTC), a time without seconds gets :00. */
function timeValue(s) {
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return `${s}T00:00:00`;
  return s.replace(/^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(?=Z|[+-]\d{2}:\d{2}|$)/, '$1:00');
}

function buildQuery(a) {
  const clauses = [];
  if (a.q) clauses.push(`(${a.q})`);
  if (a.nameContains) clauses.push(`name contains ${literal(a.nameContains)}`);
  if (a.fullText) clauses.push(`fullText contains ${literal(a.fullText)}`);
  if (a.mimeType) clauses.push(mimeClause(a.mimeType));
  if (a.folderId) clauses.push(`${literal(fileIdOf(a.folderId, 'folderId'))} in parents`);
  if (a.modifiedAfter) clauses.push(`modifiedTime > ${literal(timeValue(a.modifiedAfter))}`);
  if (!a.includeTrashed && !(a.q && /\btrashed\b/.test(a.q))) clauses.push('trashed = false');
  return clauses.join(' and ');
}

// ---------------------------------------------------------------------------------------------
// Result shapers

const person = (u) => (u && typeof u === 'object' ? u.emailAddress || u.displayName || null : null);
const num = (v) => (v === undefined || v === null || v === '' || !Number.isFinite(Number(v)) ? null : Number(v));

function slimFile(f) {
  return {
    id: f.id,
    name: f.name ?? null,
    mimeType: f.mimeType ?? null,
    modifiedTime: f.modifiedTime ?? null,
    size: num(f.size),
    parents: Array.isArray(f.parents) ? f.parents : [],
    owners: Array.isArray(f.owners) ? f.owners.map(person).filter(Boolean) : [],
    driveId: f.driveId ?? null,
    webViewLink: f.webViewLink ?? null,
    ...(f.trashed ? { trashed: true } : {}),
  };
}

function slimPermission(p) {
  return {
    id: p.id,
    type: p.type,
    role: p.role,
    emailAddress: p.emailAddress ?? null,
    domain: p.domain ?? null,
    displayName: p.displayName ?? null,
    expirationTime: p.expirationTime ?? null,
    ...(p.allowFileDiscovery !== undefined ? { allowFileDiscovery: !!p.allowFileDiscovery } : {}),
    ...(p.deleted ? { deleted: true } : {}),
  };
}

/** How drive_read_file reads a file of this type: export to a text format, download, or not at all. */
function readPlan(mimeType, format) {
  if (mimeType === GDOC) return { export: format === 'markdown' ? 'text/markdown' : 'text/plain' };
  if (mimeType === GSHEET) return { export: 'text/csv', note: 'Google Sheets export as CSV holds only the first sheet; the google-sheets tools read any sheet and range.' };
  if (mimeType === GSLIDES) return { export: 'text/plain' };
  if (mimeType === FOLDER) return { folder: true };
  if (String(mimeType).startsWith('application/vnd.google-apps.')) return { binary: true };
  if (isTextMime(mimeType)) return { download: true };
  return { binary: true };
}

function isTextMime(m) {
  const s = String(m || '').toLowerCase();
  if (s.startsWith('text/')) return true;
  if (/[+/](json|xml|yaml)$/.test(s)) return true;
  return [
    'application/javascript', 'application/x-javascript', 'application/ecmascript', 'application/x-yaml', 'application/yaml',
    'application/x-sh', 'application/x-httpd-php', 'application/sql', 'application/x-sql', 'application/toml', 'application/rtf',
    'application/x-tex', 'application/csv', 'application/x-ndjson', 'application/graphql',
  ].includes(s);
}

// ---------------------------------------------------------------------------------------------
// The multipart/related upload body

/** A boundary that occurs in none of the parts (RFC 2046: up to 70 characters). */
function boundaryFor(parts) {
  for (;;) {
    let b = 'workbench-drive-';
    while (b.length < 48) b += Math.random().toString(36).slice(2);
    b = b.slice(0, 48);
    if (!parts.some((p) => p.includes(b))) return b;
  }
}

function multipartRelated(metadata, content, contentType) {
  const json = JSON.stringify(metadata);
  const boundary = boundaryFor([json, content]);
  const body =
    `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${json}\r\n` +
    `--${boundary}\r\nContent-Type: ${contentType}\r\n\r\n${content}\r\n` +
    `--${boundary}--\r\n`;
  return { body, contentType: `multipart/related; boundary=${boundary}` };
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function searchFiles(ctx, a) {
  if (a.orderBy && a.fullText) throw new Error('Drive cannot sort a fullText search (results come in relevance order): leave out orderBy.');
  const q = buildQuery(a);
  const fullText = !!a.fullText || (a.q && /\bfullText\b/.test(a.q));
  const query = {
    q,
    pageSize: a.pageSize ?? 25,
    pageToken: a.cursor,
    orderBy: a.orderBy || (fullText ? undefined : 'modifiedTime desc'),
    fields: LIST_FIELDS,
    supportsAllDrives: 'true',
    includeItemsFromAllDrives: 'true',
    corpora: a.driveId ? 'drive' : undefined,
    driveId: a.driveId,
  };
  const data = await drive(ctx, 'GET', `${API}/files`, { query, action: 'search files' });
  const files = Array.isArray(data.files) ? data.files.map(slimFile) : [];
  return {
    query: q,
    files,
    count: files.length,
    next: data.nextPageToken || null,
    ...(data.incompleteSearch ? { incompleteSearch: true } : {}),
  };
}

async function getFile(ctx, a) {
  const id = fileIdOf(a.fileId);
  const f = await drive(ctx, 'GET', `${API}/files/${enc(id)}`, {
    query: { fields: DETAIL_FIELDS, supportsAllDrives: 'true' },
    action: `read the metadata of file ${id}`,
  });
  const plan = readPlan(f.mimeType, 'text');
  return {
    ...slimFile(f),
    description: f.description ?? null,
    createdTime: f.createdTime ?? null,
    lastModifiedBy: person(f.lastModifyingUser),
    starred: !!f.starred,
    shared: !!f.shared,
    trashed: !!f.trashed,
    shortcutTarget: f.shortcutDetails ? { id: f.shortcutDetails.targetId ?? null, mimeType: f.shortcutDetails.targetMimeType ?? null } : null,
    capabilities: f.capabilities || {},
    readableAsText: !!(plan.export || plan.download),
  };
}

async function readFile(ctx, a) {
  const id = fileIdOf(a.fileId);
  const f = await drive(ctx, 'GET', `${API}/files/${enc(id)}`, {
    query: { fields: 'id,name,mimeType,size,modifiedTime,webViewLink,shortcutDetails(targetId,targetMimeType)', supportsAllDrives: 'true' },
    action: `read the metadata of file ${id}`,
  });
  const base = { id: f.id || id, name: f.name ?? null, mimeType: f.mimeType ?? null, modifiedTime: f.modifiedTime ?? null, webViewLink: f.webViewLink ?? null };
  if (f.mimeType === 'application/vnd.google-apps.shortcut' && f.shortcutDetails && f.shortcutDetails.targetId) {
    return { ...base, content: null, note: `This is a shortcut: read its target with fileId "${f.shortcutDetails.targetId}".` };
  }
  const plan = readPlan(f.mimeType, a.format);
  if (plan.folder) throw new Error(`"${f.name}" is a folder, not a file: list its contents with drive_search_files and folderId "${base.id}".`);
  if (plan.binary) {
    return { ...base, content: null, binary: true, size: num(f.size), note: `${f.mimeType} is not a text format, so its content is not returned; open webViewLink to view it.` };
  }
  const size = num(f.size);
  if (plan.download && size !== null && size > MAX_DOWNLOAD_BYTES) {
    return { ...base, content: null, size, note: `The file is ${size} bytes, more than the ${MAX_DOWNLOAD_BYTES} this tool downloads; open webViewLink to view it.` };
  }
  const res = plan.export
    ? await drive(ctx, 'GET', `${API}/files/${enc(id)}/export`, {
        query: { mimeType: plan.export },
        raw: true,
        action: `export file ${id} as ${plan.export}`,
        // offset and maxChars cut the text after the whole export has come, so asking for less cannot help
        tooLarge: `offset and maxChars cannot help (they cut the text after the whole export is downloaded): open webViewLink (${base.webViewLink || 'the file in Google Drive'}) to read it${f.mimeType === GDOC ? `, or export it in the other format (format "${a.format === 'markdown' ? 'text' : 'markdown'}")` : ''}`,
      })
    : await drive(ctx, 'GET', `${API}/files/${enc(id)}`, { query: { alt: 'media', supportsAllDrives: 'true' }, raw: true, action: `download file ${id}` });
  const bytes = await res.bytes();
  if (plan.download && bytes.subarray(0, 8000).includes(0)) {
    return { ...base, content: null, binary: true, size: bytes.length, note: 'The file holds binary data (NUL bytes), so its content is not returned; open webViewLink to view it.' };
  }
  const text = new TextDecoder('utf-8').decode(bytes);
  const max = a.maxChars ?? MAX_CHARS;
  const start = Math.min(a.offset ?? 0, text.length);
  const end = Math.min(start + max, text.length);
  const out = {
    ...base,
    ...(plan.export ? { exportedAs: plan.export } : {}),
    totalChars: text.length,
    offset: start,
    content: text.slice(start, end),
    nextOffset: end < text.length ? end : null,
  };
  const notes = [];
  if (end < text.length) notes.push(`Cut at ${end} of ${text.length} characters: call again with offset ${end} for the rest.`);
  if (plan.note) notes.push(plan.note);
  if (notes.length) out.note = notes.join(' ');
  return out;
}

async function createFolder(ctx, a) {
  const metadata = { name: a.name, mimeType: FOLDER };
  if (a.parentId) metadata.parents = [fileIdOf(a.parentId, 'parentId')];
  const f = await drive(ctx, 'POST', `${API}/files`, {
    query: { supportsAllDrives: 'true', fields: WRITE_FIELDS },
    body: metadata,
    action: `create the folder "${a.name}"`,
  });
  return slimFile(f);
}

async function createFile(ctx, a) {
  const asDoc = a.convertToGoogleDoc === true;
  const mime = a.mimeType || 'text/plain';
  if (asDoc && mime !== 'text/plain') throw new Error('convertToGoogleDoc converts plain text: leave mimeType out (or text/plain) when setting it.');
  const metadata = { name: a.name, mimeType: asDoc ? GDOC : mime };
  if (a.parentId) metadata.parents = [fileIdOf(a.parentId, 'parentId')];
  if (a.description) metadata.description = a.description;
  const { body, contentType } = multipartRelated(metadata, a.content, `${mime}; charset=UTF-8`);
  const f = await drive(ctx, 'POST', `${UPLOAD}/files`, {
    query: { uploadType: 'multipart', supportsAllDrives: 'true', fields: WRITE_FIELDS },
    headers: { 'content-type': contentType },
    body,
    action: `create the file "${a.name}"`,
  });
  return slimFile(f);
}

async function moveOrRenameFile(ctx, a) {
  const id = fileIdOf(a.fileId);
  if (a.name === undefined && a.description === undefined && !a.moveToFolderId) {
    throw new Error('Nothing to change: give name, description or moveToFolderId.');
  }
  const query = { supportsAllDrives: 'true', fields: WRITE_FIELDS };
  if (a.moveToFolderId) {
    const target = fileIdOf(a.moveToFolderId, 'moveToFolderId');
    const current = await drive(ctx, 'GET', `${API}/files/${enc(id)}`, {
      query: { fields: 'parents', supportsAllDrives: 'true' },
      action: `read the current folder of file ${id}`,
    });
    const old = (Array.isArray(current.parents) ? current.parents : []).filter((p) => p !== target);
    query.addParents = target;
    query.removeParents = old.join(',');
  }
  const body = {};
  if (a.name !== undefined) body.name = a.name;
  if (a.description !== undefined) body.description = a.description;
  const f = await drive(ctx, 'PATCH', `${API}/files/${enc(id)}`, { query, body, action: `update file ${id}` });
  return slimFile(f);
}

async function shareFile(ctx, a) {
  const id = fileIdOf(a.fileId);
  const personal = a.type === 'user' || a.type === 'group';
  if (personal && !a.emailAddress) throw new Error(`Sharing with a ${a.type} needs emailAddress.`);
  if (!personal && a.emailAddress) throw new Error(`emailAddress is only for type user or group, not ${a.type}.`);
  if (a.type === 'domain' && !a.domain) throw new Error('Sharing with a domain needs domain, e.g. "example.com".');
  if (a.type !== 'domain' && a.domain) throw new Error('domain is only for type domain.');
  if (personal && a.allowFileDiscovery !== undefined) throw new Error('allowFileDiscovery is only for type domain or anyone.');
  if (!personal && (a.emailMessage || a.sendNotificationEmail === true)) throw new Error('Notification emails go only to a user or a group.');
  const notify = personal ? a.sendNotificationEmail !== false : undefined;
  if (a.emailMessage && notify === false) throw new Error('emailMessage needs sendNotificationEmail to be true.');
  const permission = { type: a.type, role: a.role };
  if (a.emailAddress) permission.emailAddress = a.emailAddress;
  if (a.domain) permission.domain = a.domain;
  if (a.allowFileDiscovery !== undefined) permission.allowFileDiscovery = a.allowFileDiscovery;
  const p = await drive(ctx, 'POST', `${API}/files/${enc(id)}/permissions`, {
    query: {
      supportsAllDrives: 'true',
      sendNotificationEmail: notify === undefined ? undefined : String(notify),
      emailMessage: a.emailMessage,
      fields: PERMISSION_FIELDS,
    },
    body: permission,
    action: `share file ${id} with ${a.emailAddress || a.domain || 'anyone with the link'}`,
  });
  return { fileId: id, permission: slimPermission(p), notified: notify === true };
}

async function listPermissions(ctx, a) {
  const id = fileIdOf(a.fileId);
  const data = await drive(ctx, 'GET', `${API}/files/${enc(id)}/permissions`, {
    query: { supportsAllDrives: 'true', pageSize: 100, pageToken: a.cursor, fields: `nextPageToken,permissions(${PERMISSION_FIELDS})` },
    action: `list who has access to file ${id}`,
  });
  const permissions = Array.isArray(data.permissions) ? data.permissions.map(slimPermission) : [];
  return { fileId: id, permissions, next: data.nextPageToken || null };
}

async function trashFile(ctx, a) {
  const id = fileIdOf(a.fileId);
  const restore = a.restore === true;
  const f = await drive(ctx, 'PATCH', `${API}/files/${enc(id)}`, {
    query: { supportsAllDrives: 'true', fields: 'id,name,mimeType,trashed,webViewLink' },
    body: { trashed: !restore },
    action: restore ? `restore file ${id} from the trash` : `move file ${id} to the trash`,
  });
  return { id: f.id || id, name: f.name ?? null, mimeType: f.mimeType ?? null, trashed: !!f.trashed, webViewLink: f.webViewLink ?? null };
}

export default {
  drive_search_files: searchFiles,
  drive_get_file: getFile,
  drive_read_file: readFile,
  drive_create_folder: createFolder,
  drive_create_file: createFile,
  drive_move_or_rename_file: moveOrRenameFile,
  drive_share_file: shareFile,
  drive_list_permissions: listPermissions,
  drive_trash_file: trashFile,
};
