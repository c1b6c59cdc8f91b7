import { keepHeapSmall } from '../sidecar/exporter/process/memory.js';

/**
 * The entry point's first static import after the Node.js check, so that it runs before any other module is loaded, or even
 * resolved (the program is imported dynamically afterwards): V8's compiler flags apply to the code
 * compiled from then on, and loading commander, pino and pg with the optimising compilers on leaves
 * ~7 MB of optimised code and compile zones in a process that then runs for months. Resolving the
 * program's module graph alone made Node's resolver hot enough for TurboFan (~4 MB). Only the
 * exporter asks for it (the other programs are not memory-bound).
 */
if (process.argv[2] === 'exporter') keepHeapSmall();
