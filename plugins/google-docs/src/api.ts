/**
 * @module plugins/google-docs/src/api
 * The Google Docs API v1 client on the SDK's createApi, with the plugin's own words for a failed
 * answer (a rate limit Google sends as 403, a missing OAuth scope, a write refused because the
 * document changed after the revision it was planned on, a Word file that is not a Docs document)
 * and for the gateway's refusals; document ids and links, and the two requests every tool makes:
 * read the whole document, and a batch of edits guarded by a revision. The gateway adds the Bearer
 * token: this code never sets it.
 */
import {
  createApi,
  enc,
  googleErrorInfo,
  googleReasonKind,
  path,
  type ApiFailure,
  type BridgeFailure,
  type PluginContext,
} from 'workbench/plugin-sdk';
import type { Document } from './document.js';

const SCOPE = 'https://www.googleapis.com/auth/documents';

/** The words for a failed answer; the request's `lock` is the requiredRevisionId its write carried, if any. */
function docsWords(f: ApiFailure): string {
  const info = googleErrorInfo(f.data);
  const { status } = info;
  const kind = googleReasonKind(info);
  const { action, detail: msg } = f;
  const code = f.status;
  const lock = f.options['lock'] as string | null | undefined;
  const said = msg ? ` Google said: ${msg}.` : '';
  if (code === 401)
    return `Google rejected the access token (401) while trying to ${action}: reconnect google-docs.${said}`;
  if (
    code === 429 ||
    status === 'RESOURCE_EXHAUSTED' ||
    (code === 403 && (kind === 'rate-limit' || kind === 'daily-limit'))
  ) {
    const wait =
      f.retryAfterSec !== undefined
        ? `retry after ${f.retryAfterSec} seconds`
        : 'Docs quotas are per minute: wait a minute and retry';
    return `Google Docs rate limited the request to ${action} (${code}): ${wait}.`;
  }
  if (code === 403 && (kind === 'scope' || /insufficient authentication scopes/i.test(msg))) {
    return `The google-docs connection lacks the OAuth scope needed to ${action} (403; needs ${SCOPE}): reconnect google-docs and approve access to documents.`;
  }
  if (code === 403)
    return `Google Docs refused to ${action} (403): ${msg || 'your Google account lacks access to this document'}. Ask its owner to share it with you (editor access to change it).`;
  if (code === 404)
    return `Google Docs found nothing while trying to ${action} (404): ${msg || 'no such document'}. Check the document id; Google also answers 404 for a document you cannot see.`;
  if (code === 400 && lock && (status === 'FAILED_PRECONDITION' || /revision/i.test(msg))) {
    return (
      `Google Docs refused to ${action} (400): the document changed after revision ${lock} was read (someone else edited it), so nothing was written. ` +
      `Read it again (docs_get_outline or docs_get_document) and redo the edit with the new indexes and revisionId.${said}`
    );
  }
  if (code === 400 && /not supported for this document/i.test(msg)) {
    return `Google Docs refused to ${action} (400): ${msg}. The file is probably not a Google Docs document (e.g. a Word file stored in Drive): read it with google-drive's drive_read_file.`;
  }
  if (code === 400 || code === 409 || code === 422) {
    const guard = lock ? ` (The write required revision ${lock}: if the document changed since, read it again.)` : '';
    return `Google Docs refused to ${action} (${code}): ${msg || 'the request was not valid'}.${guard}`;
  }
  if (code >= 500) return `Google Docs had a server error (${code}) while trying to ${action}: retry later.${said}`;
  return `Google Docs answered HTTP ${code} while trying to ${action}.${said}`;
}

/** The gateway's refusals: an answer over the cap (with the request's own `tooLarge` advice), or none in time. */
function docsBridgeWords(f: BridgeFailure): Error {
  if (f.code === 'GW_ERR_BRIDGE_RESPONSE_TOO_LARGE')
    return new Error(
      `The answer to ${f.action} was larger than the gateway accepts: ${(f.options['tooLarge'] as string | undefined) || 'ask for less'}.`,
    );
  if (f.code !== 'GW_ERR_BRIDGE_TIMEOUT') return f.error;
  const next =
    f.method === 'GET'
      ? 'retry in a moment'
      : 'it may still have been done, so check the document (docs_get_document) before trying again';
  return new Error(`Google Docs did not answer in time while trying to ${f.action}: ${next}.`);
}

export const api = createApi({
  base: 'https://docs.googleapis.com/v1/documents',
  provider: 'Google Docs',
  failure: (f) => new Error(docsWords(f)),
  bridgeFailure: docsBridgeWords,
});

/** A document's id, and the tab a pasted link named. */
export type DocRef = { id: string; tabId: string | undefined };

const OTHER_FILES: Record<string, string> = {
  spreadsheets: 'a Google Sheets spreadsheet: use the google-sheets tools',
  presentation: 'a Google Slides presentation',
  forms: 'a Google Form',
  drawings: 'a Google Drawing',
};

/**
 * A document id, or the id inside a Google Docs link (…/document/d/<id>/edit?tab=t.0); the link's
 * tab, if any, comes along. Ids hold only [A-Za-z0-9_-], so "." and ".." (dot segments that would
 * resolve to another endpoint) never reach a URL.
 */
export function docRef(value: string): DocRef {
  const s = value.trim();
  const other = /\/(spreadsheets|presentation|forms|drawings)\/(?:u\/\d+\/)?d\//.exec(s);
  if (other)
    throw new Error(
      `documentId "${s.slice(0, 100)}" is a link to ${OTHER_FILES[other[1]]}, not to a Google Docs document.`,
    );
  const m = /\/d\/([A-Za-z0-9_-]{2,})/.exec(s) || /[?&]id=([A-Za-z0-9_-]{2,})/.exec(s);
  const id = m ? m[1] : s;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(id))
    throw new Error(`documentId "${s.slice(0, 100)}" is neither a document id nor a Google Docs link.`);
  const tab = m ? /[?&#]tab=([A-Za-z0-9._-]{1,100})/.exec(s) : null;
  return { id, tabId: tab ? tab[1] : undefined };
}

export const docUrl = (id: string, tabId?: string | null): string =>
  `https://docs.google.com/document/d/${id}/edit${tabId ? `?tab=${enc(tabId)}` : ''}`;

/** Reads the whole document, every tab's content included (`action` words its errors). */
export function readDocument(
  ctx: PluginContext,
  id: string,
  action: string,
  suggestionsViewMode?: string,
): Promise<Document> {
  return api.json<Document>(ctx, 'GET', path`/${id}`, {
    query: { includeTabsContent: 'true', suggestionsViewMode },
    action,
    // the cut by offset and maxChars happens after the whole document has come
    tooLarge: `the document's structure (JSON) is over the response cap, and offset or maxChars cannot help since they cut the text after the whole document is downloaded. Read it as plain text with google-drive's drive_read_file (a much smaller export), or open ${docUrl(id)}`,
  });
}

/** What a batch of edits answers: the new revision, and a reply per request. */
export type BatchAnswer = {
  writeControl?: { requiredRevisionId?: string };
  replies?: Array<{ replaceAllText?: { occurrencesChanged?: number } } | null>;
};

/** Sends edits; with `lock`, Google refuses them (400) when the document is no longer at that revision. */
export function batchUpdate(
  ctx: PluginContext,
  id: string,
  requests: unknown[],
  lock: string | null | undefined,
  action: string,
): Promise<BatchAnswer> {
  return api.json<BatchAnswer>(ctx, 'POST', path`/${id}:batchUpdate`, {
    body: lock ? { requests, writeControl: { requiredRevisionId: lock } } : { requests },
    action,
    lock,
  });
}

export const newRevision = (data: BatchAnswer): string | null => data.writeControl?.requiredRevisionId || null;

/** Refuses an edit planned on an older revision before anything is written. */
export function checkRevision(doc: Document, revisionId: string | undefined, id: string): void {
  if (revisionId && doc.revisionId && doc.revisionId !== revisionId) {
    throw new Error(
      `Document ${id} changed since revision ${revisionId} was read (it is now at ${doc.revisionId}), so nothing was written: ` +
        'read it again (docs_get_outline or docs_get_document) and redo the edit with the new indexes and revisionId.',
    );
  }
}
