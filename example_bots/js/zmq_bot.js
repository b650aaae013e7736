#!/usr/bin/env node
// A 3UP 3DOWN bot in Node.js over ZeroMQ: one msgpack map per single-frame message
// on a DEALER socket (protocol/ZEROMQ.md), with the zeromq.js v6 API.  It plays like
// the stdio example (bot.js beside it, whose decide() it uses).
//
//   cd example_bots/js && npm install         # zeromq and @msgpack/msgpack
//   referee play heuristic "zmq:node example_bots/js/zmq_bot.js"      # launched
//
// As a remote bot with CURVE (the referee listens with --keys and --server-key):
//   eval "$(referee keys env alice.key_secret --server referee.key \
//           --endpoint tcp://referee.example.org:5555)"
//   node example_bots/js/zmq_bot.js                # its hello says $UPDOWN_NAME
//
// Settings come from the environment the referee (or `referee keys env`) sets:
// UPDOWN_ENDPOINT (or --connect ENDPOINT), UPDOWN_NAME (or --name NAME),
// UPDOWN_TOKEN (a launched bot's proof, sent in its hello), and for CURVE
// UPDOWN_SERVER_KEY, UPDOWN_PUBLIC_KEY, UPDOWN_SECRET_KEY (z85 text).
// Logs go to stderr.
'use strict';

const zmq = require('zeromq');
const { encode, decode } = require('@msgpack/msgpack');
const { decide } = require('./bot.js');

function option(flag) {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const NAME = option('--name') || process.env.UPDOWN_NAME || 'js-zmq';
const ENDPOINT = option('--connect') || process.env.UPDOWN_ENDPOINT;
// ZeroMQ never tells a DEALER that nobody listens or that it was refused
// (ZEROMQ.md, troubleshooting): give up when no welcome comes within this time.
const WELCOME_WITHIN_MS = Number(option('--welcome-timeout') || 30) * 1000;

function log(...parts) {
  process.stderr.write(`${NAME}: ${parts.join(' ')}\n`);
}

async function main() {
  if (!ENDPOINT) {
    log('no endpoint: set UPDOWN_ENDPOINT (the referee does for a zmq: bot) or pass --connect');
    return 2;
  }
  // linger: on close, let the last decision leave before the process exits.
  const sock = new zmq.Dealer({ linger: 1000 });
  if (process.env.UPDOWN_SERVER_KEY) {
    sock.curveServerKey = process.env.UPDOWN_SERVER_KEY;
    sock.curvePublicKey = process.env.UPDOWN_PUBLIC_KEY;
    sock.curveSecretKey = process.env.UPDOWN_SECRET_KEY;
  }
  sock.connect(ENDPOINT);
  const send = (msg) => sock.send(encode(msg));
  const hello = { type: 'hello', protocol: [1], name: NAME, version: '1.0' };
  // Launched by the referee: prove this is the process it started (ZEROMQ.md).
  if (process.env.UPDOWN_TOKEN) hello.token = process.env.UPDOWN_TOKEN;
  await send(hello);

  let welcomed = false;
  const silence = setTimeout(() => {
    log(`no welcome from ${ENDPOINT} within ${WELCOME_WITHIN_MS / 1000}s: is the endpoint ` +
        'right, and are the keys the referee expects? (the referee says why it refused)');
    sock.close();
  }, WELCOME_WITHIN_MS);

  let status = 1;
  try {
    for await (const frames of sock) {
      if (frames.length !== 1) {
        log(`ignoring a message of ${frames.length} frames`);
        continue;
      }
      const msg = decode(frames[0]);
      if (msg === null || typeof msg !== 'object') continue;
      if (msg.type === 'welcome') {
        welcomed = true;
        clearTimeout(silence);
        log(`welcome from ${msg.referee}`);
      } else if (msg.type === 'request') {
        let choice = 0;
        try {
          choice = decide(msg.observation || {}, msg.legal || []);
        } catch (e) {
          log(`decide failed (${e.stack}); answering the first legal decision`);
        }
        await send({ type: 'decision', id: msg.id, decision: choice });
      } else if (msg.type === 'rejected') {
        log(`rejected: ${msg.code}: ${msg.message} [${msg.action}]`);
      } else if (msg.type === 'error') {
        log(`referee error: ${msg.code}: ${msg.message}`);
        break;
      } else if (msg.type === 'bye') {
        status = 0;
        break;
      }
      // new_game, game_over, and anything from a newer protocol: nothing to do.
    }
  } catch (e) {
    // The socket was closed by the welcome timer (or the context went away).
    if (welcomed) log(`the connection ended: ${e.message}`);
  } finally {
    clearTimeout(silence);
    if (!sock.closed) sock.close();
  }
  return status;
}

main().then((status) => { process.exitCode = status; }, (e) => {
  log(`failed: ${e.stack}`);
  process.exitCode = 1;
});
