#!/usr/bin/env node
// `npx ferrodyn ...`: runs the platform binary with the same arguments.
'use strict';

const { spawnSync } = require('node:child_process');
const { binaryPath } = require('../index.js');

const result = spawnSync(binaryPath(), process.argv.slice(2), { stdio: 'inherit' });
if (result.error) throw result.error;
process.exit(result.status ?? 1);
