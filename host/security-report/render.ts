/**
 * @module host/security-report/render
 * The report as text for a reviewer: what ran against what, one line per class (cases run and
 * contained), then every case not contained with what happened and why; and the list of cases.
 */
import { ATTACK_CLASSES, type AttackCase } from './catalogue.js';
import type { Report } from './run-report.js';

const pad = (s: string | number, n: number): string => String(s).padEnd(n);
const padLeft = (s: string | number, n: number): string => String(s).padStart(n);

function header(r: Report): string[] {
  return [
    'Workbench security report',
    `  gateway  Workbench ${r.version} started in this process on 127.0.0.1, temporary SQLite data dir, real sandbox`,
    `  runtime  Node.js ${r.node}, isolated-vm ${r.isolatedVm}`,
    `  policy   ${r.policy.file}, with:`,
    ...r.policy.overlay.map((o) => `             ${o}`),
    '  targets  loopback only: the hostile upstream and the internal canary listen on 127.0.0.1; names resolve from a fixed table',
    '',
  ];
}

const row = (label: string, ran: number, contained: number): string =>
  `  ${pad(label, 38)}${padLeft(ran, 6)}${padLeft(contained, 11)}${padLeft(ran - contained || '-', 15)}`;

function table(r: Report): string[] {
  const lines = [
    `  ${pad('class', 38)}${padLeft('cases', 6)}${padLeft('contained', 11)}${padLeft('not contained', 15)}`,
  ];
  for (const k of r.classes) lines.push(row(`${k.title} (${k.id})`, k.ran, k.contained));
  lines.push(row('all', r.cases.length, r.cases.filter((c) => c.contained).length));
  return lines;
}

function failures(r: Report): string[] {
  const failed = r.cases.filter((c) => !c.contained);
  if (failed.length === 0) return ['', `Every case was contained (${(r.ms / 1000).toFixed(1)} s).`];
  const lines = ['', `Not contained (${failed.length}):`];
  for (const c of failed) {
    lines.push(`  ${c.class} / ${c.id}${c.pendingOn ? `   [known: to be closed by ${c.pendingOn}]` : ''}`);
    lines.push(`      tries:     ${c.tries}`);
    lines.push(`      happened:  ${c.happened}`);
    for (const p of c.problems) lines.push(`      not contained: ${p}`);
  }
  lines.push('', `${failed.length} of ${r.cases.length} cases not contained (${(r.ms / 1000).toFixed(1)} s).`);
  return lines;
}

export function renderText(r: Report): string {
  return [...header(r), ...table(r), ...failures(r)].join('\n') + '\n';
}

export function renderList(cases: readonly AttackCase[]): string {
  const lines: string[] = [];
  for (const k of ATTACK_CLASSES) {
    const mine = cases.filter((c) => c.class === k.id);
    if (mine.length === 0) continue;
    lines.push(`${k.title} (${k.id}): ${mine.length} cases — ${k.meaning}`);
    for (const c of mine)
      lines.push(`  ${pad(c.id, 46)} ${pad(c.origin, 7)}${c.pendingOn ? `[${c.pendingOn}] ` : ''}${c.tries}`);
    lines.push('');
  }
  return lines.join('\n');
}
