/**
 * @module host/cli/security-report
 * `workbench security report [--class C[,C…]] [--json] [--list] [--policy FILE]`: runs the attack
 * catalogue against a gateway started in this process (host/security-report/) and prints, per
 * class, how many cases ran and how many were contained. Exit 0 when every case was contained, 1
 * when one was not (each named, with what happened), 2 on bad input.
 */
import path from 'node:path';
import { ATTACK_CLASSES, type AttackCase } from '../security-report/catalogue.js';
import { ALL_CASES } from '../security-report/cases/index.js';
import { renderList, renderText } from '../security-report/render.js';
import { runReport } from '../security-report/run-report.js';
import { stringFlag, type ParsedArgs } from './args.js';
import { fail } from '../../contracts/errors.js';

/** The cases of the classes named in --class (all when it is absent); throws on an unknown class. */
export function selectCases(cases: readonly AttackCase[], classFlag: string | undefined): AttackCase[] {
  if (classFlag === undefined) return [...cases];
  const wanted = classFlag
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  const known: readonly string[] = ATTACK_CLASSES.map((k) => k.id);
  const unknown = wanted.filter((c) => !known.includes(c));
  if (unknown.length > 0 || wanted.length === 0)
    throw fail('GW_ERR_CLI_USAGE', {
      message: `--class takes one or more of ${known.join(', ')} (comma-separated); got "${classFlag}"`,
    });
  return cases.filter((c) => wanted.includes(c.class));
}

export async function runSecurityReport(args: ParsedArgs): Promise<number> {
  const cases = selectCases(ALL_CASES, stringFlag(args, 'class'));
  const json = args.flags.has('json');
  if (args.flags.has('list')) {
    process.stdout.write(
      json
        ? JSON.stringify({
            cases: cases.map(({ id, class: k, origin, tries, pendingOn }) => ({
              id,
              class: k,
              origin,
              tries,
              ...(pendingOn ? { pendingOn } : {}),
            })),
          }) + '\n'
        : renderList(cases),
    );
    return 0;
  }
  const policyFile = stringFlag(args, 'policy');
  if (!json) process.stderr.write(`workbench: running ${cases.length} attack cases against a gateway on 127.0.0.1…\n`);
  const report = await runReport({
    cases,
    ...(policyFile !== undefined ? { policyFile: path.resolve(policyFile) } : {}),
  });
  process.stdout.write(json ? JSON.stringify(report) + '\n' : renderText(report));
  return report.cases.every((c) => c.contained) ? 0 : 1;
}
