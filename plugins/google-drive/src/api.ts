/**
 * @module plugins/google-drive/src/api
 * The Google Drive API v3 client: metadata calls to https://www.googleapis.com/drive/v3, uploads
 * to https://www.googleapis.com/upload/drive/v3, the one mapping from a failed answer to the words
 * an agent reads, and file ids taken from ids or Drive links. The gateway adds the Bearer token:
 * this code never sets Authorization.
 */
import {
  createApi,
  googleErrorInfo,
  googleReasonKind,
  path,
  z,
  type ApiFailure,
  type BridgeFailure,
} from 'workbench/plugin-sdk';

export const UPLOAD = 'https://www.googleapis.com/upload/drive/v3';
const SCOPE = 'https://www.googleapis.com/auth/drive';

export const FOLDER = 'application/vnd.google-apps.folder';
export const GDOC = 'application/vnd.google-apps.document';
export const GSHEET = 'application/vnd.google-apps.spreadsheet';
export const GSLIDES = 'application/vnd.google-apps.presentation';

/** Every call names shared drives too. */
export const ALL_DRIVES = { supportsAllDrives: 'true' };
export const WRITE_FIELDS = 'id,name,mimeType,parents,driveId,webViewLink,trashed,modifiedTime';

/**
 * Drive's "308 Resume Incomplete" to a chunk of a resumable upload: not a failure, but the SDK
 * reads every answer outside 2xx as one, so it arrives here and is handed back as this value
 * (`range`: the bytes Drive holds, from its Range header) for the upload loop to go on.
 */
export class ResumeIncomplete extends Error {
  constructor(readonly range: string | null) {
    super('Drive has not received the whole upload yet (308)');
  }
}

/** Turns a failed Drive answer into the Error the agent sees. Every request goes through it. */
function driveError(f: ApiFailure): Error {
  if (f.status === 308 && f.options['chunk'] === true) return new ResumeIncomplete(f.headers.get('range'));
  const info = googleErrorInfo(f.data);
  const { status, reasons } = info;
  const kind = googleReasonKind(info);
  const { action, detail: message } = f;
  const code = f.status;
  const said = message ? ` Google said: ${message}.` : '';
  const reason = reasons.find((r) => r !== 'global') || '';
  const why = reason ? ` ${reason}` : '';
  if (code === 401)
    return new Error(
      `Google rejected the access token (401) while trying to ${action}: reconnect google-drive.${said}`,
    );
  const daily = kind === 'daily-limit';
  if (code === 429 || status === 'RESOURCE_EXHAUSTED' || (code === 403 && (daily || kind === 'rate-limit'))) {
    if (daily)
      return new Error(
        `Google Drive's daily quota is used up (${code} dailyLimitExceeded) while trying to ${action}: try again tomorrow.`,
      );
    const wait = f.retryAfterSec !== undefined ? `retry after ${f.retryAfterSec} seconds` : 'wait a minute and retry';
    return new Error(`Google Drive rate limited the request to ${action} (${code}${why}): ${wait}.`);
  }
  if (code === 403 && (kind === 'scope' || /insufficient authentication scopes/i.test(message))) {
    return new Error(
      `The google-drive connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-drive and approve Drive access.`,
    );
  }
  if (code === 403)
    return new Error(
      `Google Drive refused to ${action} (403${why}): ${message || 'your Google account lacks access to this file'}.`,
    );
  if (code === 404) {
    return new Error(
      `Google Drive found nothing while trying to ${action} (404): ${message || 'no such file'}. Check the id; Drive also answers 404 for a file you cannot see.`,
    );
  }
  if (code === 400 || code === 409 || code === 412 || code === 422) {
    return new Error(`Google Drive refused to ${action} (${code}${why}): ${message || 'the request was not valid'}.`);
  }
  if (code >= 500)
    return new Error(`Google Drive had a server error (${code}) while trying to ${action}: retry later.${said}`);
  return new Error(`Google Drive answered HTTP ${code} while trying to ${action}.${said}`);
}

/** The gateway's refusals in Drive's words; a request may say what to do instead of asking for less (`tooLarge`). */
function bridgeWords(f: BridgeFailure): Error {
  if (f.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE') {
    const instead = typeof f.options['tooLarge'] === 'string' ? f.options['tooLarge'] : 'ask for less';
    return new Error(`The answer to ${f.action} was larger than the gateway accepts: ${instead}.`);
  }
  if (f.code === 'GW_ERR_BRIDGE_TIMEOUT')
    return new Error(`Google Drive did not answer in time while trying to ${f.action}: retry, or ask for less.`);
  return f.error;
}

export const api = createApi({
  base: 'https://www.googleapis.com/drive/v3',
  provider: 'Google Drive',
  failure: driveError,
  bridgeFailure: bridgeWords,
});

/** `/files/:id`, and what follows it. */
export const filePath = (id: string, rest = ''): string => path`/files/${id}` + rest;

/** A file id, or the id inside a Drive / Docs URL (…/d/<id>/…, …/folders/<id>, ?id=<id>). */
export function fileIdOf(value: string, name = 'fileId'): string {
  const s = value.trim();
  const m = /\/(?:d|folders)\/([A-Za-z0-9_-]{2,})/.exec(s) || /[?&]id=([A-Za-z0-9_-]{2,})/.exec(s);
  const id = m ? m[1] : s;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id))
    throw new Error(`${name} "${s.slice(0, 100)}" is neither a Drive file id nor a Drive link.`);
  return id;
}

/** A file or folder: its id or link (see fileIdOf). */
export const fileId = z.string().min(1).max(500);
/** The folder a new file or folder goes in. */
export const parentId = {
  parentId: fileId.optional().describe('Id or link of the folder to create it in; omit for the top of My Drive.'),
};
/** `fileId` of the tools that act on a file or a folder. */
export const fileOrFolder = { fileId: fileId.describe('Id or link of the file or folder.') };
