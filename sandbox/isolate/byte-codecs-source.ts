/**
 * @module sandbox/isolate/byte-codecs-source
 * UTF-8 and base64 over bytes, as JavaScript text that web-globals-source.ts places inside its
 * function (so it runs in every fresh context, isolate-local like every other global). V8 alone has
 * neither, and plugins need both once ctx.http carries bytes: the bootstrap decodes a binary body
 * when plugin code asks for its text and encodes a text body when it asks for its bytes, and
 * plugin code turns bytes into base64 for an `_mcpImage` or builds a multipart body. The web
 * globals built on these (TextEncoder, TextDecoder, Uint8Array.prototype.toBase64,
 * Uint8Array.fromBase64, btoa, atob) are what the bootstrap captures before plugin code runs.
 *
 * Written for speed in plain V8 (a 5 MB image to base64 in ~40 ms, where btoa over a string of one
 * character per byte took 370 ms and a rope of 1.7 million strings): output goes into a typed
 * array, and becomes a string in slices of CHUNK characters.
 *
 * Every fresh context runs this, so it does as little as it can there: it captures the intrinsics
 * the codecs use (before plugin code runs, which may replace them) and makes the codecs themselves
 * (`codecs()`, their functions and tables) on first use. Typed-array views are made with the
 * constructor (never subarray or slice, which look up a species plugin code could replace), and
 * lengths read with the intrinsic getter.
 */

export const BYTE_CODECS_SOURCE = String.raw`
  const U8 = Uint8Array, U16 = Uint16Array, Apply = Reflect.apply, FromCharCode = String.fromCharCode;
  const TypeErrorCtor = TypeError, SyntaxErrorCtor = SyntaxError, StringCtor = String;
  const StringCharCodeAt = String.prototype.charCodeAt, RegExpExec = RegExp.prototype.exec;
  // read now: plugin code may replace these accessors later
  const getterOf = (proto, key) => Object.getOwnPropertyDescriptor(proto, key).get;
  const TypedArrayProto = Object.getPrototypeOf(U8.prototype);
  const TA_BUFFER = getterOf(TypedArrayProto, 'buffer'), TA_OFFSET = getterOf(TypedArrayProto, 'byteOffset');
  const TA_LENGTH = getterOf(TypedArrayProto, 'byteLength'), TA_TAG = getterOf(TypedArrayProto, Symbol.toStringTag);
  const TA_SET = TypedArrayProto.set, TA_FILL = TypedArrayProto.fill;
  const DV_BUFFER = getterOf(DataView.prototype, 'buffer'), DV_OFFSET = getterOf(DataView.prototype, 'byteOffset');
  const DV_LENGTH = getterOf(DataView.prototype, 'byteLength'), AB_LENGTH = getterOf(ArrayBuffer.prototype, 'byteLength');
  const SAB_LENGTH = typeof SharedArrayBuffer === 'function' ? getterOf(SharedArrayBuffer.prototype, 'byteLength') : undefined;
  let made = null;
  // the codecs, made on first use: a context whose plugin never touches bytes pays only for the
  // captures above (everything below is reached through captured intrinsics, never a global)
  const codecs = () => (made === null ? (made = makeCodecs()) : made);

  function makeCodecs() {
    const CHUNK = 8192;
    const NON_ASCII = /[^\u0000-\u007f]/;
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const ALPHABET_URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    let encodeTable = null, encodeTableUrl = null, decodeTable = null, decodeTableUrl = null;

    const AB_LENGTH_OF = (t) => Apply(AB_LENGTH, Apply(TA_BUFFER, t, []), []);
    // the length of a Uint8Array, by the intrinsic getter (plugin code may replace the prototype's)
    const lengthOf = (t) => Apply(TA_LENGTH, t, []);
    const isUint8Array = (v) => { try { return Apply(TA_TAG, v, []) === 'Uint8Array'; } catch (e) { return false; } };
    const codeAt = (s, i) => Apply(StringCharCodeAt, s, [i]);
    const toText = (v) => {
      if (typeof v === 'symbol') throw new TypeErrorCtor('Cannot convert a Symbol value to a string');
      return StringCtor(v);
    };

    // What a BufferSource holds: { bytes: a Uint8Array over its bytes, shared } for an ArrayBuffer,
    // a SharedArrayBuffer, a typed array or a DataView (found by the intrinsic getters, which no
    // prototype change reaches); undefined for anything else. A detached buffer throws TypeError.
    function bufferSource(v) {
      if (v === null || typeof v !== 'object') return undefined;
      let buffer, offset = 0, length;
      try { buffer = Apply(TA_BUFFER, v, []); } catch (e) { buffer = undefined; }
      if (buffer !== undefined) {
        offset = Apply(TA_OFFSET, v, []);
        length = Apply(TA_LENGTH, v, []);
      } else {
        try { buffer = Apply(DV_BUFFER, v, []); } catch (e) { buffer = undefined; }
        if (buffer !== undefined) {
          try { offset = Apply(DV_OFFSET, v, []); length = Apply(DV_LENGTH, v, []); } catch (e) { throw new TypeErrorCtor('the buffer is detached'); }
        } else buffer = v;
      }
      let shared = false, size;
      try { size = Apply(AB_LENGTH, buffer, []); } catch (e) {
        if (SAB_LENGTH === undefined) return undefined;
        try { size = Apply(SAB_LENGTH, buffer, []); shared = true; } catch (x) { return undefined; }
      }
      if (length === undefined) length = size;
      let bytes;
      // a detached buffer reads as empty, but no view of it can be made
      try { bytes = new U8(buffer, offset, length); } catch (e) { throw new TypeErrorCtor('the buffer is detached'); }
      return { bytes, shared };
    }

    // a view of part of a typed array, without subarray (which looks up a species)
    const part = (t, start, end) => new U8(Apply(TA_BUFFER, t, []), Apply(TA_OFFSET, t, []) + start, end - start);
    const part16 = (t, end) => new U16(Apply(TA_BUFFER, t, []), 0, end);

    // the first n bytes of a Uint8Array as a string of one character per byte, CHUNK at a time
    // (apply takes a bounded list)
    function stringOf(codes, n) {
      let out = '';
      for (let i = 0; i < n; i += CHUNK) out += Apply(FromCharCode, null, part(codes, i, i + CHUNK < n ? i + CHUNK : n));
      return out;
    }

    // a Uint8Array's buffer, and a copy of its bytes in a buffer of their own
    const bufferOf = (t) => Apply(TA_BUFFER, t, []);
    const copyOf = (bytes) => {
      const out = new U8(lengthOf(bytes));
      Apply(TA_SET, out, [bytes]);
      return out;
    };

    // the first n bytes of a Uint8Array in a Uint8Array of their own (no spare bytes in its buffer)
    function exact(bytes, n) {
      if (n === Apply(TA_LENGTH, bytes, []) && n === AB_LENGTH_OF(bytes)) return bytes;
      const out = new U8(n);
      Apply(TA_SET, out, [part(bytes, 0, n)]);
      return out;
    }

    function base64Encode(bytes, url, pad) {
      if (encodeTable === null) {
        encodeTable = new U8(64);
        encodeTableUrl = new U8(64);
        for (let i = 0; i < 64; i++) { encodeTable[i] = codeAt(ALPHABET, i); encodeTableUrl[i] = codeAt(ALPHABET_URL, i); }
      }
      const T = url ? encodeTableUrl : encodeTable;
      const n = lengthOf(bytes), whole = n - (n % 3);
      const out = new U8(((n + 2) / 3 | 0) * 4);
      let o = 0, i = 0;
      for (; i < whole; i += 3) {
        const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
        out[o++] = T[v >> 18]; out[o++] = T[(v >> 12) & 63]; out[o++] = T[(v >> 6) & 63]; out[o++] = T[v & 63];
      }
      if (i < n) {
        const two = i + 1 < n;
        const v = (bytes[i] << 16) | (two ? bytes[i + 1] << 8 : 0);
        out[o++] = T[v >> 18]; out[o++] = T[(v >> 12) & 63];
        if (two) out[o++] = T[(v >> 6) & 63];
        if (pad) { if (!two) out[o++] = 61; out[o++] = 61; }
      }
      return stringOf(out, o);
    }

    const isSpace = (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
    const badBase64 = (why) => new SyntaxErrorCtor('the string is not valid base64: ' + why);

    // base64 text to bytes, as Uint8Array.fromBase64 has it (ASCII whitespace skipped anywhere;
    // lastChunk: 'loose' takes a last chunk of 2 or 3 characters without padding and ignores its
    // spare bits, 'strict' wants padding and zero spare bits, 'stop-before-partial' leaves a partial
    // last chunk out). Throws SyntaxError.
    function base64Decode(s, url, lastChunk) {
      if (decodeTable === null) {
        decodeTable = Apply(TA_FILL, new U8(128), [255]);
        decodeTableUrl = Apply(TA_FILL, new U8(128), [255]);
        for (let i = 0; i < 64; i++) { decodeTable[codeAt(ALPHABET, i)] = i; decodeTableUrl[codeAt(ALPHABET_URL, i)] = i; }
      }
      const T = url ? decodeTableUrl : decodeTable;
      const n = s.length;
      const out = new U8(((n + 3) >> 2) * 3);
      let o = 0, acc = 0, k = 0, i = 0;
      for (; i < n; i++) {
        const c = codeAt(s, i);
        const d = c < 128 ? T[c] : 255;
        if (d !== 255) {
          acc = (acc << 6) | d;
          if (++k === 4) { out[o++] = acc >> 16; out[o++] = (acc >> 8) & 255; out[o++] = acc & 255; acc = 0; k = 0; }
        } else if (c === 61) break;
        else if (!isSpace(c)) throw badBase64('"' + FromCharCode(c) + '" at ' + i);
      }
      if (i < n) {
        // padding: after 2 characters "==", after 3 "=", then only whitespace
        if (k < 2) throw badBase64('misplaced padding at ' + i);
        i++;
        while (i < n && isSpace(codeAt(s, i))) i++;
        if (k === 2) {
          if (i === n) { if (lastChunk === 'stop-before-partial') return part(out, 0, o); throw badBase64('incomplete padding'); }
          if (codeAt(s, i) !== 61) throw badBase64('incomplete padding');
          i++;
          while (i < n && isSpace(codeAt(s, i))) i++;
        }
        if (i < n) throw badBase64('characters after the padding');
        return finishChunk(out, o, acc, k, lastChunk === 'strict');
      }
      if (k === 0) return part(out, 0, o);
      if (lastChunk === 'stop-before-partial') return part(out, 0, o);
      if (lastChunk === 'strict') throw badBase64('the last chunk has no padding');
      if (k === 1) throw badBase64('a last chunk of one character');
      return finishChunk(out, o, acc, k, false);
    }

    // the 1 or 2 bytes of a last chunk of 2 or 3 characters (acc holds its 12 or 18 bits)
    function finishChunk(out, o, acc, k, strict) {
      const spare = k === 2 ? acc & 15 : acc & 3;
      if (strict && spare !== 0) throw badBase64('the last chunk has bits set past its bytes');
      if (k === 2) out[o++] = acc >> 4;
      else { out[o++] = acc >> 10; out[o++] = (acc >> 2) & 255; }
      return part(out, 0, o);
    }

    // the UTF-8 bytes of a string, a lone surrogate as U+FFFD (as TextEncoder has it)
    function utf8Encode(s) {
      const n = s.length;
      if (Apply(RegExpExec, NON_ASCII, [s]) === null) {
        const out = new U8(n);
        for (let i = 0; i < n; i++) out[i] = codeAt(s, i);
        return out;
      }
      let size = 0;
      for (let i = 0; i < n; i++) {
        const c = codeAt(s, i);
        if (c < 0x80) size += 1;
        else if (c < 0x800) size += 2;
        else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (codeAt(s, i + 1) & 0xfc00) === 0xdc00) { size += 4; i++; }
        else size += 3;
      }
      const out = new U8(size);
      utf8EncodeInto(s, out, 0);
      return out;
    }

    // writes the UTF-8 bytes of s from unit "from" into out while whole characters fit; returns
    // [units read, bytes written]
    function utf8EncodeInto(s, out, from) {
      const n = s.length, room = lengthOf(out);
      let o = 0, i = from;
      for (; i < n; i++) {
        let c = codeAt(s, i);
        if (c < 0x80) { if (o >= room) break; out[o++] = c; continue; }
        if (c < 0x800) {
          if (o + 2 > room) break;
          out[o++] = 0xc0 | (c >> 6); out[o++] = 0x80 | (c & 63);
          continue;
        }
        if (c >= 0xd800 && c <= 0xdfff) {
          const d = c <= 0xdbff && i + 1 < n ? codeAt(s, i + 1) : 0;
          if ((d & 0xfc00) === 0xdc00) {
            if (o + 4 > room) break;
            c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            out[o++] = 0xf0 | (c >> 18); out[o++] = 0x80 | ((c >> 12) & 63); out[o++] = 0x80 | ((c >> 6) & 63); out[o++] = 0x80 | (c & 63);
            i++;
            continue;
          }
          c = 0xfffd;
        }
        if (o + 3 > room) break;
        out[o++] = 0xe0 | (c >> 12); out[o++] = 0x80 | ((c >> 6) & 63); out[o++] = 0x80 | (c & 63);
      }
      return [i - from, o];
    }

    // A UTF-8 decoder as the Encoding Standard has it: each maximal invalid sequence is one U+FFFD
    // (or, when fatal, a TypeError). state carries a character split between calls: [bytes needed,
    // bytes seen, code point, lower bound, upper bound of the next byte]. flush: the input ends here.
    function utf8Decode(bytes, state, fatal, flush) {
      const n = lengthOf(bytes);
      const units = new U16(CHUNK + 2);
      let need = state[0], seen = state[1], cp = state[2], lower = state[3], upper = state[4];
      let u = 0, out = '';
      for (let i = 0; i < n; i++) {
        const b = bytes[i];
        if (need === 0) {
          if (b < 0x80) units[u++] = b;
          else if (b >= 0xc2 && b <= 0xdf) { need = 1; cp = b & 0x1f; }
          else if (b >= 0xe0 && b <= 0xef) { if (b === 0xe0) lower = 0xa0; else if (b === 0xed) upper = 0x9f; need = 2; cp = b & 0xf; }
          else if (b >= 0xf0 && b <= 0xf4) { if (b === 0xf0) lower = 0x90; else if (b === 0xf4) upper = 0x8f; need = 3; cp = b & 7; }
          else if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
          else units[u++] = 0xfffd;
        } else if (b < lower || b > upper) {
          if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
          need = 0; seen = 0; cp = 0; lower = 0x80; upper = 0xbf;
          units[u++] = 0xfffd;
          i--; // this byte starts afresh
        } else {
          lower = 0x80; upper = 0xbf;
          cp = (cp << 6) | (b & 0x3f);
          if (++seen === need) {
            if (cp < 0x10000) units[u++] = cp;
            else { cp -= 0x10000; units[u++] = 0xd800 | (cp >> 10); units[u++] = 0xdc00 | (cp & 0x3ff); }
            need = 0; seen = 0; cp = 0;
          }
        }
        if (u >= CHUNK) { out += Apply(FromCharCode, null, part16(units, u)); u = 0; }
      }
      if (flush && need !== 0) {
        if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
        units[u++] = 0xfffd;
        need = 0; seen = 0; cp = 0; lower = 0x80; upper = 0xbf;
      }
      if (u > 0) out += Apply(FromCharCode, null, part16(units, u));
      state[0] = need; state[1] = seen; state[2] = cp; state[3] = lower; state[4] = upper;
      return out;
    }
    const freshUtf8State = () => [0, 0, 0, 0x80, 0xbf];

    return { __proto__: null, bufferSource, base64Encode, base64Decode, utf8Encode, utf8EncodeInto, utf8Decode, freshUtf8State, stringOf, exact, copyOf, bufferOf, isUint8Array, lengthOf, codeAt, toText };
  }
`;
