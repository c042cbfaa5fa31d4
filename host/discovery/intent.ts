/**
 * @module host/discovery/intent
 * Whether a query asks to read ("which PRs are open", "show the diff") or to change something
 * ("open a ticket", "retry the build"), and which kind of tool a name's leading verb makes it
 * (github_list_* reads, github_create_* writes). A tool whose kind contradicts the query's intent
 * is ranked lower, never removed.
 */
import { PHRASE_MARK } from './analyze.js';
import { stem } from './stem.js';

export type Intent = 'read' | 'write';

/** Words that open a request to look something up. */
const READ_CUES = new Set([
  'what',
  'which',
  'who',
  'whom',
  'whose',
  'how',
  'where',
  'when',
  'why',
  'show',
  'list',
  'get',
  'find',
  'search',
  'read',
  'view',
  'see',
  'display',
  'any',
  'is',
  'are',
  'was',
  'were',
  'do',
  'does',
  'did',
  'has',
  'have',
  'fetch',
  'look',
  'lookup',
  'check',
  'count',
  'browse',
  'inspect',
  'describe',
  'whats',
  'whos',
  'hows',
  'wheres',
  'latest',
  'recent',
  'newest',
  'my',
  'mine',
  'unread',
  'pending',
  'open',
  // the terms of phrases that ask ("who am I", "who is in the channel"), as the query reads after phrases collapse
  'whoami',
  'member',
  // past participles describe a state to filter on ("tickets assigned to me", "PRs merged today")
  'assigned',
  'created',
  'closed',
  'merged',
  'opened',
  'resolved',
  'failed',
  'failing',
  'mentioned',
  'pinned',
  'starred',
  'updated',
  'reported',
  'blocked',
  'waiting',
]);

/**
 * Imperative verbs that ask for a change when they lead the query (base forms only: "assigned"
 * describes, "assign" acts). Many double as nouns ("release", "comment"), so only the
 * unambiguous ones in {@link WRITE_VERBS_ANYWHERE} count elsewhere in the query.
 */
const WRITE_CUES = new Set([
  'create',
  'make',
  'add',
  'new',
  'post',
  'send',
  'write',
  'update',
  'edit',
  'change',
  'set',
  'rename',
  'delete',
  'remove',
  'close',
  'resolve',
  'merge',
  'assign',
  'unassign',
  'move',
  'transition',
  'trigger',
  'start',
  'restart',
  'rerun',
  'retry',
  'cancel',
  'stop',
  'abort',
  'approve',
  'publish',
  'invite',
  'join',
  'leave',
  'pin',
  'unpin',
  'archive',
  'schedule',
  'mark',
  'acknowledge',
  'ack',
  'link',
  'record',
  'react',
  'reply',
  'comment',
  'upload',
  'push',
  'commit',
  'file',
  'request',
  'ignore',
  'reopen',
  'kick',
  'submit',
  'ask',
  'raise',
  'put',
  'tag',
  'label',
  'give',
  'dm',
  'message',
  'ping',
  'tell',
  'notify',
  'announce',
  'run',
  'deploy',
  'release',
  'transfer',
  'watch',
  'subscribe',
  'share',
  'cc',
  'invite',
  'answer',
  'respond',
]);

const WRITE_VERBS_ANYWHERE = new Set([
  'create',
  'make',
  'add',
  'post',
  'send',
  'update',
  'edit',
  'rename',
  'delete',
  'remove',
  'close',
  'merge',
  'assign',
  'unassign',
  'trigger',
  'restart',
  'rerun',
  'retry',
  'cancel',
  'abort',
  'approve',
  'publish',
  'invite',
  'pin',
  'unpin',
  'archive',
  'schedule',
  'acknowledge',
  'reopen',
  'submit',
  'upload',
  'notify',
  'tell',
  'announce',
  'transfer',
  'subscribe',
  'start',
  'stop',
  'resolve',
]);

/** Words skipped before the first meaningful word ("could you please …", "I want to …"). */
const FILLERS = new Set([
  'please',
  'can',
  'could',
  'would',
  'will',
  'you',
  'i',
  'we',
  'me',
  'us',
  'hey',
  'lets',
  'let',
  'want',
  'wanna',
  'need',
  'to',
  'like',
  'id',
  'just',
  'go',
  'ahead',
  'quickly',
  'now',
  'so',
  'ok',
  'okay',
  'also',
  'then',
  'first',
  'help',
  'try',
  'and',
]);

/** Leading name verbs of tools that only read. */
const READ_VERBS = new Set(
  ['list', 'get', 'search', 'find', 'read', 'lookup', 'whoami', 'show', 'view', 'fetch', 'describe', 'count'].map(stem),
);

/** Leading name verbs of tools that change something. */
const WRITE_VERBS = new Set(
  [
    'create',
    'update',
    'delete',
    'add',
    'remove',
    'post',
    'send',
    'set',
    'merge',
    'trigger',
    'rerun',
    'cancel',
    'assign',
    'transition',
    'link',
    'schedule',
    'archive',
    'join',
    'leave',
    'invite',
    'pin',
    'unpin',
    'mark',
    'acknowledge',
    'resolve',
    'reply',
    'publish',
    'record',
    'upload',
    'edit',
    'close',
    'approve',
    'submit',
    'request',
    'react',
    'comment',
    'move',
    'write',
    'rename',
    'star',
    'unstar',
    'watch',
    'upsert',
  ].map(stem),
);

/**
 * The query's intent from its first meaningful word ("which …", "retry …"), else from any
 * imperative verb in it, else from any question word; undefined when nothing says.
 */
export function queryIntent(words: readonly string[]): Intent | undefined {
  const first = words.findIndex((w) => !FILLERS.has(w));
  const lead = words[first];
  // a phrase (intentWords marks its first word): a thing named, no imperative — but "check run
  // status" still asks
  if (lead?.startsWith(PHRASE_MARK)) {
    if (READ_CUES.has(lead.slice(PHRASE_MARK.length))) return 'read';
  } else if (lead !== undefined) {
    // "open a ticket" creates; "open PRs" describes a state
    if (lead === 'open') return ['a', 'an', 'new'].includes(words[first + 1] ?? '') ? 'write' : 'read';
    if (READ_CUES.has(lead)) return 'read';
    if (WRITE_CUES.has(lead)) return 'write';
  }
  if (words.some((w) => WRITE_VERBS_ANYWHERE.has(w))) return 'write';
  if (words.some((w) => READ_CUES.has(w))) return 'read';
  return undefined;
}

/** Verbs that adjectives and nouns reach through synonyms ("open" → create, "new" → add). */
const MAKING_VERBS = new Set(
  ['create', 'add', 'make', 'start', 'submit', 'post', 'send', 'raise', 'compose'].map(stem),
);

/** Whether a stemmed term is a verb that makes something new (create, add, post, …). */
export function isMakingVerb(term: string): boolean {
  return MAKING_VERBS.has(term);
}

/** The kind of tool a stemmed leading name word makes (undefined for neutral verbs such as "run"). */
export function verbIntent(term: string | undefined): Intent | undefined {
  if (term === undefined) return undefined;
  if (READ_VERBS.has(term)) return 'read';
  if (WRITE_VERBS.has(term)) return 'write';
  return undefined;
}
