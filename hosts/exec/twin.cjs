// twin.cjs — twin inputs for a Node.js copy (paper §IV-F, assumption A4;
// SPEC §10; docs/exec.md "Twin inputs").
//
// gl-exec-host starts a runtime "exec" copy's target with
// NODE_OPTIONS=--require=<this file> and, for a germline call (not a
// baseline's session), GL_TWIN_TIME (seconds) and GL_TWIN_SEED (64 hex
// digits): the call's twin inputs, the same in every copy of one call. From
// them, before the server's own code runs, this file derives what a
// JavaScript program reads as "now" or "random", as the Python host does:
//
//   Date.now(), new Date()           frozen at GL_TWIN_TIME
//   performance.now(), process.hrtime(.bigint)
//                                    a counter that starts at 1000 s plus an
//                                    offset below 1 s from the seed and
//                                    advances 1 ms per read
//   Math.random()                    xorshift128+ seeded from the seed
//   crypto.randomBytes, randomFill(Sync), getRandomValues, randomUUID,
//   randomInt (also globalThis.crypto)
//                                    SHA-256(seed || 0 || "urandom" || counter)
//
// So two copies of one call that read the clock and draw nonces send the
// same requests and the tripwire stays silent (no false witnesses). It is a
// JavaScript-level shim, like the Python one: code that wants the real
// clock can find it (Intl, file times, native addons). That spoils only the
// release's own determinism, never its confinement. Without GL_TWIN_TIME
// (the baselines) nothing is replaced.
'use strict';

try {
(function () {
  const env = process.env;
  const t = Number(env.GL_TWIN_TIME);
  const seedHex = env.GL_TWIN_SEED || '';
  delete env.GL_TWIN_TIME;
  delete env.GL_TWIN_SEED;
  // The server sees the environment its manifest asked for: our --require
  // leaves NODE_OPTIONS (node has read it already).
  const ours = '--require=' + __filename;
  if (typeof env.NODE_OPTIONS === 'string' && env.NODE_OPTIONS.startsWith(ours)) {
    const rest = env.NODE_OPTIONS.slice(ours.length).trim();
    if (rest)
      env.NODE_OPTIONS = rest;
    else
      delete env.NODE_OPTIONS;
  }
  if (!Number.isFinite(t) || !/^[0-9a-f]{64}$/.test(seedHex))
    return;
  const crypto = require('crypto');
  const seed = Buffer.from(seedHex, 'hex');
  const derive = (what) => crypto.createHash('sha256')
    .update(Buffer.concat([seed, Buffer.from([0]), Buffer.from(what)])).digest();

  // ---- the random stream ---------------------------------------------------
  let pool = Buffer.alloc(0);
  let block = 0n;
  function stream(n) {
    const parts = [pool];
    let have = pool.length;
    while (have < n) {
      const c = Buffer.alloc(8);
      c.writeBigUInt64BE(block++);
      const d = derive(Buffer.concat([Buffer.from('urandom'), c]));
      parts.push(d);
      have += d.length;
    }
    const all = Buffer.concat(parts);
    pool = Buffer.from(all.subarray(n));
    return Buffer.from(all.subarray(0, n));
  }
  function fill(buf, off, size) {
    const u8 = ArrayBuffer.isView(buf)
      ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
      : new Uint8Array(buf);
    off = off === undefined ? 0 : off;
    size = size === undefined ? u8.length - off : size;
    u8.set(stream(size), off);
    return buf;
  }
  function uuid() {
    const b = stream(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  // A property the runtime made read-only stays as it is: the shim must
  // never stop the server it serves.
  const set = (obj, name, value) => {
    try {
      Object.defineProperty(obj, name, {value, writable: true, configurable: true});
    } catch (e) {
      try {
        obj[name] = value;
      } catch (e2) { /* left real */ }
    }
  };
  set(crypto, 'randomBytes', (n, cb) => {
    const b = stream(n);
    if (typeof cb === 'function') {
      process.nextTick(cb, null, b);
      return undefined;
    }
    return b;
  });
  set(crypto, 'randomFillSync', (buf, off, size) => fill(buf, off, size));
  set(crypto, 'randomFill', (buf, ...rest) => {
    const cb = rest.pop();
    fill(buf, ...rest);
    process.nextTick(cb, null, buf);
  });
  set(crypto, 'randomUUID', uuid);
  set(crypto, 'randomInt', (min, max, cb) => {
    if (typeof max !== 'number') {
      cb = max;
      max = min;
      min = 0;
    }
    const v = min + Number(stream(6).readUIntBE(0, 6) % (max - min));
    if (typeof cb === 'function') {
      process.nextTick(cb, null, v);
      return undefined;
    }
    return v;
  });
  const grv = (arr) => fill(arr);
  set(crypto, 'getRandomValues', grv);
  set(crypto.webcrypto, 'getRandomValues', grv);
  set(crypto.webcrypto, 'randomUUID', uuid);
  if (globalThis.crypto && globalThis.crypto !== crypto.webcrypto) {
    set(globalThis.crypto, 'getRandomValues', grv);
    set(globalThis.crypto, 'randomUUID', uuid);
  }

  // ---- Math.random: xorshift128+ ----------------------------------------------
  const M = (1n << 64n) - 1n;
  const rs = derive('random');
  let s0 = rs.readBigUInt64BE(0) | 1n;
  let s1 = rs.readBigUInt64BE(8) | 1n;
  Math.random = function random() {
    let x = s0;
    const y = s1;
    s0 = y;
    x = (x ^ (x << 23n)) & M;
    s1 = x ^ y ^ (x >> 17n) ^ (y >> 26n);
    return Number(((s1 + y) & M) >> 11n) / 2 ** 53;
  };

  // ---- clocks ------------------------------------------------------------------
  const ms = t * 1000;
  const RealDate = Date;
  function TwinDate(...a) {
    if (!new.target)
      return new RealDate(ms).toString();
    return a.length ? new RealDate(...a) : new RealDate(ms);
  }
  Object.setPrototypeOf(TwinDate, RealDate);
  TwinDate.prototype = RealDate.prototype;
  TwinDate.now = () => ms;
  globalThis.Date = TwinDate;

  let mono = 1000n * 1000000000n + BigInt(derive('counter').readUInt32BE(0) % 1000000000);
  const tick = () => (mono += 1000000n);
  const hrtime = (prev) => {
    const v = tick();
    let s = Number(v / 1000000000n);
    let n = Number(v % 1000000000n);
    if (Array.isArray(prev)) {
      s -= prev[0];
      n -= prev[1];
      if (n < 0) {
        s--;
        n += 1e9;
      }
    }
    return [s, n];
  };
  hrtime.bigint = tick;
  process.hrtime = hrtime;
  const {performance} = require('perf_hooks');
  set(performance, 'now', () => Number(tick()) / 1e6);
  if (globalThis.performance && globalThis.performance !== performance)
    set(globalThis.performance, 'now', () => Number(tick()) / 1e6);

  // ES modules that import from 'crypto' see the replacements too.
  require('module').syncBuiltinESMExports();
})();
} catch (e) { /* a shim that failed halfway: the server still runs */ }
