/**
 * @module host/discovery/synonyms
 * The words people use for the same thing when they look for a tool: "pr" and "pull request",
 * "ticket" and "issue", "post" and "message". Phrases collapse to one term before stop words are
 * dropped ("look up" → search); groups relate single terms with a weight below 1, so an exact
 * word always outranks its synonym. Everything is compiled to stems once, on first use.
 */
import { stem } from './stem.js';

/** Multi-word phrases that name one thing, and the single term that stands for them. */
const PHRASES: readonly (readonly [string, string])[] = [
  ['pull request', 'pr'],
  ['merge request', 'pr'],
  ['direct message', 'dm'],
  ['private message', 'dm'],
  ['look up', 'search'],
  ['kick off', 'trigger'],
  ['new relic', 'newrelic'],
  ['code review', 'review'],
  ['who am i', 'whoami'],
  ['sign in', 'login'],
  ['log in', 'login'],
  ['on call', 'oncall'],
  ['check run', 'checkrun'],
  ['follow up', 'comment'],
  ['who is in', 'member'],
  ['who is on', 'member'],
];

/** Symmetric groups: every member relates to every other with the group's weight. */
const GROUPS: readonly (readonly [number, readonly string[]])[] = [
  [0.9, ['pr', 'mr']],
  [0.8, ['issue', 'ticket', 'bug', 'task', 'story', 'defect']],
  [0.7, ['message', 'msg', 'post', 'chat', 'send', 'text']],
  [0.9, ['repo', 'repository', 'repositories']],
  [0.9, ['dm', 'im', 'mpim']],
  [0.7, ['comment', 'reply', 'respond', 'response', 'remark']],
  [0.6, ['create', 'open', 'new', 'add', 'make', 'start', 'submit', 'raise', 'compose']],
  [0.7, ['close', 'resolve', 'done', 'finish', 'complete']],
  [0.8, ['delete', 'remove', 'erase', 'destroy', 'trash', 'drop']],
  [0.6, ['list', 'show', 'enumerate', 'browse']],
  [0.5, ['get', 'fetch', 'read', 'retrieve', 'view', 'show', 'detail', 'info', 'describe', 'inspect', 'see']],
  [0.45, ['list', 'get']],
  [0.8, ['search', 'find', 'lookup', 'locate', 'discover', 'query']],
  [0.8, ['user', 'person', 'member', 'people', 'teammate', 'colleague', 'someone', 'employee']],
  [0.8, ['channel', 'room', 'conversation']],
  [0.65, ['alert', 'incident', 'violation', 'alarm', 'outage', 'problem']],
  [0.8, ['deploy', 'deployment', 'release', 'ship', 'rollout']],
  [0.7, ['assign', 'assignee', 'owner', 'responsible']],
  [0.7, ['update', 'edit', 'modify', 'change', 'set', 'rename', 'patch', 'amend', 'alter', 'adjust']],
  [0.6, ['transition', 'move', 'status', 'state']],
  [0.7, ['trigger', 'run', 'dispatch', 'launch', 'execute', 'rerun']],
  [0.7, ['workflow', 'action', 'pipeline', 'ci', 'build', 'job']],
  [0.6, ['merge', 'land', 'combine']],
  [0.7, ['label', 'tag']],
  [0.8, ['org', 'organization', 'organisation', 'company']],
  [0.7, ['react', 'reaction', 'emoji']],
  [0.8, ['favorite', 'favourite', 'star', 'bookmark']],
  [0.7, ['upload', 'attach', 'attachment']],
  [0.7, ['review', 'approve', 'approval', 'feedback']],
  [0.7, ['error', 'exception', 'failure', 'crash', 'fail', 'broken']],
  [0.6, ['app', 'application', 'service', 'entity', 'apm']],
  [0.6, ['host', 'server', 'machine', 'infrastructure', 'infra']],
  [0.7, ['dashboard', 'chart', 'widget', 'graph', 'visualization', 'visualisation']],
  [0.8, ['nrql', 'sql']],
  [0.6, ['nrql', 'query']],
  [0.7, ['metric', 'telemetry', 'measurement', 'stat', 'statistic']],
  [0.6, ['notification', 'mention', 'notify']],
  [0.7, ['sprint', 'iteration']],
  [0.6, ['diff', 'patch', 'changes']],
  [0.6, ['branch', 'ref']],
  [0.7, ['schedule', 'remind', 'reminder', 'later']],
  [0.6, ['history', 'timeline', 'activity']],
  [0.6, ['whoami', 'myself', 'profile', 'identity', 'authenticated', 'current']],
  [0.6, ['login', 'auth', 'authenticate', 'credential']],
  [0.7, ['username', 'handle', 'login', 'nickname']],
  [0.7, ['invite', 'join']],
  [0.6, ['leave', 'quit', 'exit']],
  [0.7, ['file', 'document', 'doc', 'attachment']],
  [0.6, ['topic', 'subject', 'purpose']],
  [0.6, ['member', 'participant']],
  [0.7, ['cancel', 'abort', 'stop', 'halt']],
  [0.7, ['recent', 'latest', 'newest', 'last']],
  [0.8, ['meeting', 'event', 'appointment']],
  [0.6, ['free', 'available', 'availability']],
  [0.9, ['email', 'mail']],
];

/** One-way relations: the query word on the left also means the terms on the right. */
const ONE_WAY: readonly (readonly [number, string, readonly string[]])[] = [
  [0.35, 'file', ['create']],
  [0.35, 'issue', ['incident', 'alert']],
  [0.35, 'incident', ['issue']],
  [0.5, 'give', ['assign']],
  [0.5, 'ping', ['message', 'mention']],
  [0.5, 'tell', ['message', 'send']],
  [0.5, 'announce', ['message', 'post']],
  [0.5, 'say', ['message', 'send']],
  [0.45, 'check', ['status', 'get']],
  [0.45, 'details', ['get']],
  [0.45, 'add', ['invite']],
  [0.45, 'kick', ['remove']],
  [0.45, 'mine', ['assign']],
  [0.4, 'stuck', ['fail']],
  [0.4, 'red', ['fail']],
  [0.4, 'slow', ['latency', 'performance']],
  [0.6, 'cancel', ['delete']],
  [0.4, 'history', ['list', 'log']],
  [0.6, 'ask', ['request']],
  [0.5, 'yesterday', ['history', 'recent']],
  [0.6, 'inbox', ['email', 'mail']],
  ...[
    'tomorrow',
    'tonight',
    'morning',
    'afternoon',
    'evening',
    'monday',
    'tuesday',
    'wednesday',
    'thursday',
    'friday',
    'weekend',
  ].map((day) => [0.6, day, ['schedule', 'later']] as const),
];

/** Abbreviations people type, and what they stand for. */
const ABBREVIATIONS: readonly (readonly [string, readonly string[]])[] = [
  ['lst', ['list']],
  ['ls', ['list']],
  ['usr', ['user']],
  ['cfg', ['config', 'configuration']],
  ['conf', ['config', 'configuration']],
  ['desc', ['description']],
  ['del', ['delete']],
  ['rm', ['remove', 'delete']],
  ['upd', ['update']],
  ['notif', ['notification']],
  ['notifs', ['notification']],
  ['env', ['environment']],
  ['prod', ['production']],
  ['perms', ['permission']],
  ['info', ['information', 'detail']],
  ['stats', ['statistic', 'metric']],
  ['txt', ['text']],
  ['img', ['image']],
  ['pic', ['image']],
];

interface Phrase {
  words: string[];
  term: string;
}

interface Compiled {
  phrases: Phrase[];
  /** phrases by their first stemmed word, longest first */
  phrasesByFirst: Map<string, Phrase[]>;
  related: Map<string, Map<string, number>>;
  /** every raw word the tables mention, with its stem (fed to typo correction) */
  words: Map<string, string>;
}

let compiled: Compiled | undefined;

function relate(map: Map<string, Map<string, number>>, from: string, to: string, w: number): void {
  if (from === to) return;
  let m = map.get(from);
  if (!m) map.set(from, (m = new Map<string, number>()));
  if ((m.get(to) ?? 0) < w) m.set(to, w);
}

function compile(): Compiled {
  const words = new Map<string, string>();
  const stemOf = (w: string): string => {
    const s = stem(w);
    words.set(w, s);
    return s;
  };
  const phrases = PHRASES.map(([p, t]) => ({ words: p.split(' ').map(stemOf), term: stemOf(t) }));
  // longest phrases first, so "who am i" is tried before any shorter phrase
  phrases.sort((a, b) => b.words.length - a.words.length);
  const related = new Map<string, Map<string, number>>();
  for (const [w, group] of GROUPS) {
    const stems = [...new Set(group.map(stemOf))];
    for (const a of stems) for (const b of stems) relate(related, a, b, w);
  }
  for (const [w, from, tos] of ONE_WAY) {
    for (const to of tos) relate(related, stemOf(from), stemOf(to), w);
  }
  for (const [from, tos] of ABBREVIATIONS) {
    for (const to of tos) relate(related, stemOf(from), stemOf(to), 0.9);
  }
  const phrasesByFirst = new Map<string, Phrase[]>();
  for (const p of phrases) {
    const first = p.words[0] ?? '';
    phrasesByFirst.set(first, [...(phrasesByFirst.get(first) ?? []), p]);
  }
  return { phrases, phrasesByFirst, related, words };
}

function tables(): Compiled {
  compiled ??= compile();
  return compiled;
}

/** The phrases whose first stemmed word is `first`, longest first. */
export function phrasesStartingWith(first: string): readonly Phrase[] {
  return tables().phrasesByFirst.get(first) ?? NO_PHRASES;
}

const NO_PHRASES: readonly Phrase[] = [];

/** Terms related to a stemmed term, with weights in (0, 1). The term itself is not included. */
export function synonymsOf(term: string): ReadonlyMap<string, number> {
  return tables().related.get(term) ?? EMPTY;
}

/** Raw words known to the synonym tables, mapped to their stems. */
export function synonymVocabulary(): ReadonlyMap<string, string> {
  return tables().words;
}

const EMPTY: ReadonlyMap<string, number> = new Map();
