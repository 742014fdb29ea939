#!/usr/bin/env node
// Stands in for `systemctl restart dn42-agent` in self-update specs: starts
// <prefix>/current/dist/dn42-agent.mjs <stateDir> and waits for it, as systemctl
// returns once the unit has started.
import { spawnSync } from 'node:child_process';

const [prefix, stateDir] = process.argv.slice(2);
const run = spawnSync(process.execPath, [`${prefix}/current/dist/dn42-agent.mjs`, stateDir], { stdio: 'inherit' });
process.stdout.write(`restarted: exit ${run.status}\n`);
