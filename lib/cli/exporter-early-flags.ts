import { keepHeapSmall } from '../../sidecar/exporter/memory.js';

/**
 * Imported first by the entry point, so that it runs before any other module is loaded: V8's
 * compiler flags apply to the code compiled from then on, and loading commander, pino and pg with
 * the optimising compilers on leaves ~7 MB of optimised code and compile zones in a process that
 * then runs for months. Only the exporter asks for it (the other programs are not memory-bound).
 */
if (process.argv[2] === 'exporter') keepHeapSmall();
