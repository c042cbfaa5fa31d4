/**
 * @module host/builtins/browser/keys
 * Key names as agents and people write them ("enter", "ctrl+a", "Cmd+Shift+K", "Tab Tab Enter")
 * turned into Playwright's ("Enter", "Control+a", "Meta+Shift+K"). Keys are separated by spaces
 * (pressed one after the other), a combination's parts by "+". A name Playwright does not know is
 * refused by it ("Unknown key"), which the tool answers as invalid arguments.
 */
import { fail } from '../../../contracts/errors.js';

const ALIASES: Record<string, string> = {
  ctrl: 'Control',
  control: 'Control',
  cmd: 'Meta',
  command: 'Meta',
  meta: 'Meta',
  super: 'Meta',
  win: 'Meta',
  alt: 'Alt',
  option: 'Alt',
  shift: 'Shift',
  enter: 'Enter',
  return: 'Enter',
  esc: 'Escape',
  escape: 'Escape',
  tab: 'Tab',
  space: 'Space',
  backspace: 'Backspace',
  delete: 'Delete',
  del: 'Delete',
  insert: 'Insert',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
  arrowup: 'ArrowUp',
  arrowdown: 'ArrowDown',
  arrowleft: 'ArrowLeft',
  arrowright: 'ArrowRight',
};

/** presses in one browser_key call */
export const MAX_PRESSES = 50;

/** One key or combination ("ctrl+a") in Playwright's spelling. */
export function normaliseKey(combo: string): string {
  // "+" alone, or as the last part ("ctrl++"), is the plus key
  const parts = combo.endsWith('++')
    ? [...combo.slice(0, -2).split('+'), '+']
    : combo === '+'
      ? ['+']
      : combo.split('+');
  return parts
    .map((p) => {
      const alias = ALIASES[p.toLowerCase()];
      if (alias) return alias;
      if (/^f([1-9]|1[0-2])$/i.test(p)) return p.toUpperCase();
      return p;
    })
    .join('+');
}

/** The presses a `keys` argument asks for, in order. */
export function keyPresses(keys: string): string[] {
  const presses = keys
    .trim()
    .split(/\s+/)
    .filter((k) => k !== '')
    .map(normaliseKey);
  if (presses.length === 0) throw fail('GW_ERR_VALIDATION_INVALID_ARGS', { message: 'keys: name at least one key' });
  if (presses.length > MAX_PRESSES)
    throw fail('GW_ERR_VALIDATION_INVALID_ARGS', {
      message: `keys: at most ${MAX_PRESSES} presses in one call (${presses.length} given)`,
    });
  return presses;
}
