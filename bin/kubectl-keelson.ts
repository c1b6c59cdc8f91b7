#!/usr/bin/env node
import '../lib/cli/node-check.js';
import { withUsageExitCodes } from '../lib/cli/exit.js';
import { createKubectlPlugin } from '../ctl/kubectl/plugin.js';

/** `kubectl keelson ...`: kubectl runs the executable kubectl-keelson found on PATH (package.json "bin"). */
await withUsageExitCodes(createKubectlPlugin()).parseAsync(process.argv);
