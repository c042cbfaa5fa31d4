/**
 * @module test/host/bridge/redaction-bytes.unit.test
 * Redaction of a body that is not UTF-8 text, which plugin code reads as bytes: every form of a
 * secret (raw, JSON-escaped, base64, URL-encoded), non-ASCII characters included, is found as UTF-8
 * bytes among bytes that are not text, and the bytes around it are kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redactor } from '../../../host/bridge/redaction.js';

const redactBytes = (bytes: Uint8Array, secrets: string[]): Uint8Array => Redactor.of(secrets)?.bytes(bytes) ?? bytes;

const EVERY_BYTE = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

describe('redacting bytes', () => {
  it('finds every form of a secret, non-ASCII characters and JSON escapes included, as UTF-8 bytes among bytes that are not text', () => {
    const secret = 'pässwörd-✓-€uro';
    const escaped = JSON.stringify(secret)
      .slice(1, -1)
      .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const body = Buffer.concat([
      Buffer.from([0xff, 0xfe, 0x00]),
      Buffer.from(`${secret} | ${escaped} | ${Buffer.from(secret).toString('base64')} | ${encodeURIComponent(secret)}`),
      Buffer.from([0xc3]),
    ]);
    const out = Buffer.from(redactBytes(body, [secret]));
    const text = new TextDecoder().decode(out);
    assert.deepEqual([...out.subarray(0, 3)], [0xff, 0xfe, 0x00], 'the bytes around are kept');
    assert.equal(out.at(-1), 0xc3);
    assert.equal(text.slice(3, -1), '[REDACTED] | [REDACTED] | [REDACTED] | [REDACTED]');
    assert.equal(redactBytes(EVERY_BYTE, [secret]), EVERY_BYTE, 'bytes without a secret are handed back as they are');
  });
});
