// germline.mjs ADDON ENTRY [ARG…] — bench/node-fork.sh's warm Node process:
// imports the server's entry once (its stdio an idle socket, no call data),
// lets its start settle (GL_BENCH_SETTLE_MS; a data-free exchange may
// happen meanwhile), then serves forks on the descriptor GL_BENCH_CTL
// (fork.c). Each child returns from serve() with the copy's channel on
// stdin and stdout, and the server's transport reads it.
import { createRequire } from 'module';
import { pathToFileURL } from 'url';

const [addonPath, entry] = process.argv.slice(2);
const addon = createRequire(import.meta.url)(addonPath);
process.argv.splice(1, 2); // the server sees argv as if started as `node ENTRY ARG…`
await import(pathToFileURL(entry).href);
await new Promise((resolve) => setTimeout(resolve, Number(process.env.GL_BENCH_SETTLE_MS || 300)));
addon.serve(Number(process.env.GL_BENCH_CTL));
