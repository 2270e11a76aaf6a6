// bench/tls.sh's Node.js release (runtime exec, protocol "germline"): one GET
// per call, https://api.example/ (through the copy's relay, verified with
// the session's authority: docs/exec.md "HTTPS") or http://plain.example/,
// with the operator's token; returns the status.
'use strict';
const http = require('http');
const https = require('https');

let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const tls = JSON.parse(input).function === 'https';
  const mod = tls ? https : http;
  const req = mod.get({host: tls ? 'api.example' : 'plain.example', path: '/bench',
    headers: {Authorization: 'Bearer ' + (process.env.API_TOKEN || '')}}, (res) => {
    res.resume();
    res.on('end', () => process.stdout.write(JSON.stringify({status: res.statusCode})));
  });
  req.on('error', (e) => process.stdout.write(JSON.stringify({error: e.code || String(e)})));
});
