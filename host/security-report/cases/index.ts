/**
 * @module host/security-report/cases/index
 * The whole catalogue, in class order: the research corpus's cases, then the report's own.
 */
import { ATTACK_CLASSES, type AttackCase } from '../catalogue.js';
import { CORPUS_CASES } from './corpus.js';

const NEW_CASES: AttackCase[] = [];

const classOrder = (c: AttackCase): number => ATTACK_CLASSES.findIndex((k) => k.id === c.class);

export const ALL_CASES: readonly AttackCase[] = [...CORPUS_CASES, ...NEW_CASES].sort((a, b) => classOrder(a) - classOrder(b));
