#!/usr/bin/env node
// Stands in for `systemctl restart dn42-agent` with the real packed agent: stops the
// process named in <pidFile> (SIGTERM, as systemd does), then starts
// <prefix>/current/dist/dn42-agent.mjs as a daemon in its own session, output appended
// to <logFile>, and records its pid. Arguments after <logFile> go to the agent.
import { spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';

const [prefix, pidFile, logFile, ...agentArgs] = process.argv.slice(2);
let old = null;
try {
  old = Number(readFileSync(pidFile, 'utf8'));
} catch {
  // no pid file: no daemon to stop
}
if (old) {
  try {
    process.kill(old, 'SIGTERM');
    for (let i = 0; i < 100; i++) {
      process.kill(old, 0);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch {
    // kill(old, 0) threw: the old daemon has exited
  }
}
const out = openSync(logFile, 'a');
const child = spawn(process.execPath, [`${prefix}/current/dist/dn42-agent.mjs`, ...agentArgs], { detached: true, stdio: ['ignore', out, out] });
writeFileSync(pidFile, String(child.pid));
child.unref();
