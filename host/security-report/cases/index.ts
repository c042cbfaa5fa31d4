/**
 * @module host/security-report/cases/index
 * The whole catalogue, in class order: the cases of the sandbox research corpus, then the report's
 * own (origin "new").
 */
import { ATTACK_CLASSES, type AttackCase } from '../catalogue.js';
import { CORPUS_CASES } from './corpus.js';
import { CREDENTIAL_ECHO_CASES } from './credential-echo.js';
import { CROSS_USER_CASES } from './cross-user.js';
import { HEADER_SMUGGLING_CASES } from './header-smuggling.js';
import { ISOLATE_ESCAPE_CASES } from './isolate-escapes.js';
import { RESOURCE_ABUSE_CASES } from './resource-abuse.js';
import { RESULT_SHAPE_CASES } from './result-shapes.js';
import { SSRF_CASES } from './ssrf.js';

const NEW_CASES: AttackCase[] = [
  ...SSRF_CASES,
  ...HEADER_SMUGGLING_CASES,
  ...CREDENTIAL_ECHO_CASES,
  ...ISOLATE_ESCAPE_CASES,
  ...RESOURCE_ABUSE_CASES,
  ...CROSS_USER_CASES,
  ...RESULT_SHAPE_CASES,
];

const classOrder = (c: AttackCase): number => ATTACK_CLASSES.findIndex((k) => k.id === c.class);

export const ALL_CASES: readonly AttackCase[] = [...CORPUS_CASES, ...NEW_CASES].sort(
  (a, b) => classOrder(a) - classOrder(b),
);
