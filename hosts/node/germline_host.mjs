// germline_host.mjs RELEASE_DIR ENTRY [ARG…] — a Node germline's start
// (docs/exec.md "The Node germline"; paper §VI "Germline and copies").
//
// Run by the broker's verified launch as `node --single-threaded`, under
// the germline's namespaces, minimal root, Landlock and seccomp, with
// gl-atfork.so preloaded and the control socket on fd 3. It points stdin
// and stdout at two idle pipes, imports the server (its initialisation,
// before any data exists: A2), optionally lets it answer one data-free
// `initialize` and `tools/list` (GL_NODE_WARM=1: the code a call runs is
// then compiled once here, not in every copy), and hands over to the fork
// server (germline.node), which never returns here. In a copy it returns
// with the copy's channel on stdin and stdout, or (GL_NODE_EXEC_HOST=1) a
// socket to the gl-exec-host that the copy's first process became, with
// GL_NODE_STATE_DIR its workspace; the server's own stdio transport goes on
// reading it.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CTL = 3;
const WARM_MS = 10000;
const WARM_BYTES = 1 << 20; // the server's answers to the warm-up, at most
const here = path.dirname(fileURLToPath(import.meta.url));
const addon = createRequire(import.meta.url)(path.join(here, 'germline.node'));

// One line of the server's stdout for each id in ids, within WARM_MS.
function answers(fd, ids) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not answer a data-free ' +
      'initialize and tools/list within ' + WARM_MS + ' ms')), WARM_MS);
    const want = new Set(ids);
    let text = '';
    const more = () => fs.read(fd, Buffer.alloc(65536), 0, 65536, null, (err, n, buf) => {
      if (err || n === 0) {
        clearTimeout(timer);
        return reject(err || new Error('the server closed its stdout'));
      }
      text += buf.toString('utf8', 0, n);
      if (text.length > WARM_BYTES) {
        clearTimeout(timer);
        return reject(new Error('the server wrote more than ' + WARM_BYTES + ' bytes without ' +
          'answering a data-free initialize and tools/list'));
      }
      let nl;
      while ((nl = text.indexOf('\n')) >= 0) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        try { want.delete(JSON.parse(line).id); } catch { /* not JSON-RPC: skipped */ }
      }
      if (want.size === 0) {
        clearTimeout(timer);
        return resolve();
      }
      more();
    });
    more();
  });
}

async function warmUp(stdinW, stdoutR) {
  const send = (m) => fs.writeSync(stdinW, JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {},
    clientInfo: { name: 'germline-warm-up', version: '0' } } });
  send({ method: 'notifications/initialized' });
  send({ id: 2, method: 'tools/list', params: {} });
  await answers(stdoutR, [1, 2]);
}

const [releaseDir, entry, ...args] = process.argv.slice(2);
const profile = process.env.GL_PROFILE || null;
const copyUids = process.env.GL_COPY_UIDS === '1';
const warm = process.env.GL_NODE_WARM === '1';
// GL_NODE_EXEC_HOST=1: each copy speaks the copy protocol through gl-exec-host
const host = process.env.GL_NODE_EXEC_HOST === '1' ? path.join(here, 'gl-exec-host') : null;
const stateDir = process.env.GL_NODE_STATE_DIR || null; // gl-exec-host's workspace
for (const k of ['GL_PROFILE', 'GL_COPY_UIDS', 'GL_NODE_WARM', 'GL_NODE_EXEC_HOST',
  'GL_NODE_STATE_DIR', 'LD_PRELOAD'])
  delete process.env[k];
try {
  const [stdinW, stdoutR] = addon.stdio();
  const script = path.resolve(releaseDir, entry);
  process.argv = [process.argv[0], script, ...args]; // as if started as `node ENTRY ARG…`
  await import(pathToFileURL(script).href);
  if (warm)
    await warmUp(stdinW, stdoutR);
  // two turns of the event loop: what the import started (the transport's
  // first read on stdin among it) is under way before the loop stops here
  for (let i = 0; i < 2; i++)
    await new Promise((resolve) => setImmediate(resolve));
  addon.serve(CTL, profile, copyUids, host, stateDir); // returns in a copy only
} catch (e) {
  addon.reportError(CTL, String((e && e.stack) || e));
  process.exit(1);
}
