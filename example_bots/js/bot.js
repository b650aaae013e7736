#!/usr/bin/env node
// A 3UP 3DOWN bot in plain Node.js (no npm packages): JSON lines over stdio,
// protocol version 1 (protocol/PROTOCOL.md).
//
//   referee play "node example_bots/js/bot.js" random
//
// Policy: play the lowest number it can (all its copies), a Clear only when no
// number can be played; otherwise the first legal decision (turn a 3DOWN card, take
// the optional draw, pick up, keep, ...).  Logs go to stderr: stdout is the protocol.
'use strict';

const readline = require('readline');

const NAME = process.argv[2] || 'js-lowest';
const SPECIALS = ['C', 'C+1', 'C+2'];

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function log(...parts) {
  process.stderr.write(parts.join(' ') + '\n');
}

// "play hand 7x2" -> {kind: 7, count: 2}; "play 3up C+1" -> {kind: 12, count: 1};
// "play hand 7g 7r" (four_of_a_colour names the cards) -> {kind: 7, count: 2};
// anything else -> null.
function readPlay(text) {
  const t = text.split(' ');
  if (t[0] !== 'play' || t.length < 3) return null;
  const body = t.slice(2);
  let kind;
  let count = body.length;
  if (body.length === 1 && SPECIALS.includes(body[0])) {
    kind = body[0];
  } else if (body.length === 1 && body[0].includes('x')) {
    const [k, c] = body[0].split('x');
    kind = k;
    count = Number(c);
  } else {
    kind = body[0].slice(0, -1); // drop the colour letter
  }
  const special = SPECIALS.indexOf(kind);
  return { kind: special >= 0 ? 11 + special : Number(kind), count };
}

function decide(observation, legal) {
  let best = -1;
  let bestPlay = null;
  legal.forEach((text, i) => {
    const p = readPlay(text);
    if (p === null) return;
    if (bestPlay === null || p.kind < bestPlay.kind ||
        (p.kind === bestPlay.kind && p.count > bestPlay.count)) {
      best = i;
      bestPlay = p;
    }
  });
  return best >= 0 ? best : 0;
}

function handle(msg) {
  switch (msg.type) {
    case 'welcome':
      log(`${NAME}: welcome from ${msg.referee}`);
      break;
    case 'request': {
      let choice = 0;
      try {
        choice = decide(msg.observation || {}, msg.legal || []);
      } catch (e) {
        log(`${NAME}: decide failed (${e.stack}); answering the first legal decision`);
      }
      send({ type: 'decision', id: msg.id, decision: choice });
      break;
    }
    case 'rejected':
      log(`${NAME}: rejected: ${msg.code}: ${msg.message} [${msg.action}]`);
      break;
    case 'error':
      log(`${NAME}: referee error: ${msg.code}: ${msg.message}`);
      if (msg.action === 'disconnect') process.exit(1);
      break;
    case 'bye':
      process.exit(0);
      break;
    default:
      // new_game, game_over, and anything from a newer protocol: nothing to do.
      break;
  }
}

module.exports = { decide, readPlay };

// Run as a program (not required by example_bots/js/zmq_bot.js, which shares decide).
if (require.main === module) {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      log(`${NAME}: ignoring a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (msg !== null && typeof msg === 'object') handle(msg);
  });
  rl.on('close', () => process.exit(0));

  send({ type: 'hello', protocol: [1], name: NAME, version: '1.0' });
}
