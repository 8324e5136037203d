#!/usr/bin/env node
// Hosts the fake bd (tests/fakes/bd) for a whole test run, so that a `bd` call from an e2e sandbox costs a
// bash process (tests/fakes/bd-client.bash) instead of a node start: ~2 ms of CPU instead of ~60, over the
// ~800 bd calls of the e2e tests. The calls run the very same code (the fake's run()), one at a time.
//
// Started by tests/support/global-setup.ts, which passes the address on as FAKE_BD_SERVER=<port>:<token>.
// It listens on 127.0.0.1 only, answers only requests carrying its token, writes only into the two empty
// files a request names (fake-bd-<pid>.out and .err, made by the client), and exits when its standard input
// closes (the test run is over).
//
// Request (NUL-terminated fields): token, stdout file, stderr file, cwd, argc, argv…, envc, env…, where
// each env field is NAME=value, or NAME alone for a variable that is not set. The client opened both
// files before asking; the server writes the call's output into them, removes their names and answers
// "<exit code>\0" (the client reads the output through the descriptors it holds). A call that needs a
// process of its own (FAKE_BD_DELAY_MS sleeps inside it) never comes here: the client runs node for it.
// A variable the fake reads that the client did not send fails the call loudly.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

const BD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bd');
const token = process.env.FAKE_BD_SERVER_TOKEN;
if (!token) {
  process.stderr.write('bd-server.mjs: set FAKE_BD_SERVER_TOKEN, the secret every request must carry\n');
  process.exit(2);
}

const host = {};
// The shebang line is blanked, not removed, so that the fake's line numbers stay right in its stack traces.
const source = fs.readFileSync(BD, 'utf8').replace(/^#!.*/, '');
new vm.Script(`(function (__fakeBdHost, require) {${source}\n})`, { filename: BD }).runInThisContext()(host, createRequire(BD));
if (typeof host.run !== 'function') throw new Error(`${BD} did not hand over its run()`);

/** The variables a client sent (NAME=value, or NAME alone when unset). */
function variables(fields) {
  const values = new Map();
  for (const field of fields) {
    const at = field.indexOf('=');
    if (at === -1) values.set(field, undefined);
    else values.set(field.slice(0, at), field.slice(at + 1));
  }
  return values;
}

/** The environment a call sees: what the client sent, and a loud failure for anything else. */
function environment(values) {
  return new Proxy({}, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      if (!values.has(name)) throw new Error(`the fake bd read $${name}, which tests/fakes/bd-client.bash does not send: add it there`);
      return values.get(name);
    },
    has: (_target, name) => typeof name === 'string' && values.get(name) !== undefined,
  });
}

/** The fields of a whole request, or undefined while some are still to come. */
function parse(fields) {
  if (fields.length < 5) return undefined;
  const argc = Number(fields[4]);
  const envAt = 5 + argc;
  if (fields.length <= envAt) return undefined;
  const envc = Number(fields[envAt]);
  if (fields.length < envAt + 1 + envc) return undefined;
  return { token: fields[0], outFile: fields[1], errFile: fields[2], cwd: fields[3], argv: fields.slice(5, envAt), env: fields.slice(envAt + 1, envAt + 1 + envc) };
}

/** Only the empty files a client makes for its answer. */
function ownFile(file) {
  if (!path.isAbsolute(file) || !/^fake-bd-\d+\.(out|err)$/.test(path.basename(file))) return false;
  try {
    const stat = fs.lstatSync(file);
    return stat.isFile() && stat.size === 0;
  } catch {
    return false;
  }
}

function answer(request) {
  if (request.token !== token || !ownFile(request.outFile) || !ownFile(request.errFile)) return undefined;
  let stdout = '';
  let stderr = '';
  let code;
  try {
    code = host.run(request.argv, { env: environment(variables(request.env)), cwd: request.cwd, out: (text) => (stdout += text), err: (text) => (stderr += text) });
  } catch (error) {
    stderr += `fake bd server: ${error && error.message ? error.message : error}\n`;
    code = 2;
  }
  fs.writeFileSync(request.outFile, stdout);
  fs.writeFileSync(request.errFile, stderr);
  for (const file of [request.outFile, request.errFile]) fs.rmSync(file, { force: true });
  return `${code}\0`;
}

const server = net.createServer((socket) => {
  let buffered = Buffer.alloc(0);
  let done = false;
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk) => {
    if (done) return;
    buffered = Buffer.concat([buffered, chunk]);
    // Whole fields only (a character split across two reads is decoded once it is all there).
    const fields = [];
    for (let start = 0, end; (end = buffered.indexOf(0, start)) !== -1; start = end + 1) fields.push(buffered.toString('utf8', start, end));
    const request = parse(fields);
    if (!request) return;
    done = true;
    let reply;
    try {
      reply = answer(request);
    } catch (error) {
      // Never down for the rest of the run: this call gets no answer (its client says so), the next does.
      process.stderr.write(`fake bd server: ${error && error.stack ? error.stack : error}\n`);
    }
    if (reply === undefined) socket.destroy();
    else socket.end(reply);
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${address.port}\n`);
});
process.stdin.on('data', () => undefined);
process.stdin.on('end', () => process.exit(0));
